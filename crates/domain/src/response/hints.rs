//! The words shown around an answer widget.

use serde_json::Value;

/// The most characters of a number's `prefix` or `suffix`.
pub const MAX_AFFIX: usize = 20;
/// The most characters of a placeholder or a boolean's label.
pub const MAX_HINT: usize = 100;

/// What a reviewer is shown around the answer widget, from the request's
/// own `response_config`: a number's `prefix` and `suffix` (`$`, ` USD`),
/// a placeholder, a boolean's labels and colours. None of it changes what
/// an answer may be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewerHints {
    /// Shown before a number (`$`).
    pub prefix: Option<String>,
    /// Shown after a number (` USD`).
    pub suffix: Option<String>,
    /// Shown in an empty text or number box.
    pub placeholder: Option<String>,
    /// The word for `true` (default: Approve).
    pub true_label: Option<String>,
    /// The word for `false` (default: Reject).
    pub false_label: Option<String>,
    /// The colour of the `true` button.
    pub true_color: Option<String>,
    /// The colour of the `false` button.
    pub false_color: Option<String>,
    /// Words for points of a rating scale, by the point as written (`"5"`).
    pub rating_labels: Vec<(String, String)>,
}

impl ReviewerHints {
    /// The hints of a stored `response_config` (checked when the request
    /// was made; anything else there is ignored).
    pub fn of(config: &Value) -> Self {
        let text = |key: &str| {
            config
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let color = |key: &str| text(key).filter(|c| is_hex_color(c));
        // Spaces are part of an affix: `$` then 5, 5 then ` USD`.
        let affix = |key: &str| {
            config
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned)
        };
        Self {
            prefix: affix("prefix"),
            suffix: affix("suffix"),
            placeholder: text("placeholder"),
            true_label: text("true_label"),
            false_label: text("false_label"),
            true_color: color("true_color"),
            false_color: color("false_color"),
            rating_labels: config
                .get("labels")
                .and_then(Value::as_object)
                .map(|labels| {
                    labels
                        .iter()
                        .filter_map(|(point, label)| {
                            Some((point.clone(), label.as_str()?.trim().to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The word for a point of a rating scale, if the request gave one.
    pub fn rating_label(&self, point: &str) -> Option<&str> {
        self.rating_labels
            .iter()
            .find(|(p, _)| p == point)
            .map(|(_, label)| label.as_str())
    }
}

/// True for `#rgb` or `#rrggbb`.
pub(super) fn is_hex_color(color: &str) -> bool {
    let hex = color.strip_prefix('#').unwrap_or_default();
    matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit())
}
