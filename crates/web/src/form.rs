//! Submitted forms, read from `application/x-www-form-urlencoded` bodies
//! by hand, because a checkbox group repeats its name.

use std::collections::HashMap;

use url::form_urlencoded;

/// The fields of one submitted form, in order, repeats kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct FormData {
    fields: Vec<(String, String)>,
    /// Where each name is first, so that forms of many numbered fields
    /// (the rules and template builders) are read in linear time.
    first: HashMap<String, usize>,
}

impl FormData {
    /// Parses a body (or a query string).
    pub fn parse(body: &[u8]) -> Self {
        let fields: Vec<(String, String)> = form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let mut first = HashMap::with_capacity(fields.len());
        for (at, (name, _)) in fields.iter().enumerate() {
            first.entry(name.clone()).or_insert(at);
        }
        Self { fields, first }
    }

    /// The first value of `name`, if sent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.first
            .get(name)
            .and_then(|at| self.fields.get(*at))
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, or "".
    pub fn text(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }

    /// Every value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The query string of a page's address.
    pub fn query(req: &actix_web::HttpRequest) -> Self {
        Self::parse(req.query_string().as_bytes())
    }

    /// The `page` of a paged list: 1 unless a number from 1 to 10,000 is given.
    pub fn page_number(&self) -> u32 {
        self.get("page")
            .and_then(|p| p.parse().ok())
            .filter(|p| (1..=10_000).contains(p))
            .unwrap_or(1)
    }

    /// Whether a checkbox `name` was ticked.
    pub fn checked(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

/// Percent-encodes a value for a query string.
pub(crate) fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// A `next=` target that stays on this site: a path starting with one `/`.
/// Anything else (`//evil.example`, `https://…`, `/\evil`) becomes `/app`.
pub(crate) fn local_path(next: Option<&str>) -> String {
    match next {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && !p.chars().any(|c| c.is_control()) =>
        {
            p.to_owned()
        }
        _ => "/app".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_are_kept_in_order() {
        let f = FormData::parse(b"answer=a&answer=b+c&csrf=x%26y");
        assert_eq!(f.all("answer"), ["a", "b c"]);
        assert_eq!(f.text("csrf"), "x&y");
        assert_eq!(f.get("missing"), None);
        assert!(f.checked("answer"));
    }

    #[test]
    fn next_targets_stay_on_this_site() {
        assert_eq!(local_path(Some("/app/requests/1")), "/app/requests/1");
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil",
            "app",
            "/a\nb",
        ] {
            assert_eq!(local_path(Some(bad)), "/app", "{bad}");
        }
        assert_eq!(local_path(None), "/app");
    }
}
