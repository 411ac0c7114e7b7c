//! The field builder of the Templates page: a template's fields as rows
//! of plain form controls (so it works without the script), read back
//! into the `fields` JSON the API takes. Adding or removing a row posts
//! the form and draws it again, keeping everything typed.

use maud::{html, Markup};
use reviewloop_domain::{Form, MAX_FIELDS};
use serde_json::{Map, Value};

use crate::form::FormData;

/// The field types, as the API names them and as the builder says them.
pub(super) const TYPES: [(&str, &str); 7] = [
    ("content_display", "Shows content (no answer)"),
    ("boolean", "Yes or no"),
    ("single_select", "One of some options"),
    ("multi_select", "Some of some options"),
    ("rating", "A rating"),
    ("number", "A number"),
    ("text", "Text"),
];

/// The keys a row has controls of its own for; the rest of a field's
/// settings are its "More settings" JSON.
const OWN_KEYS: [&str; 6] = ["name", "label", "type", "required", "editable", "options"];

/// One field as the builder shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Row {
    pub name: String,
    pub label: String,
    pub kind: String,
    pub required: bool,
    pub editable: bool,
    /// One option a line: `value`, or `value | label`.
    pub options: String,
    /// The field's other settings, as a JSON object (empty for none).
    pub settings: String,
}

impl Row {
    fn blank() -> Self {
        Self {
            kind: "boolean".into(),
            ..Self::default()
        }
    }

    /// True for a row nobody wrote in: it is left out of the template.
    fn is_blank(&self) -> bool {
        self.name.trim().is_empty()
            && self.label.trim().is_empty()
            && self.options.trim().is_empty()
            && self.settings.trim().is_empty()
    }
}

/// The rows of a saved form.
pub(super) fn rows_of(form: &Form) -> Vec<Row> {
    form.fields()
        .iter()
        .map(|field| {
            let Value::Object(mut map) = field.to_value() else {
                return Row::blank();
            };
            let text = |map: &Map<String, Value>, key: &str| {
                map.get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let options = map
                .get("options")
                .and_then(Value::as_array)
                .and_then(|options| options_text(options));
            let row = Row {
                name: text(&map, "name"),
                label: text(&map, "label"),
                kind: text(&map, "type"),
                required: map.get("required") == Some(&Value::Bool(true)),
                editable: map.get("editable") == Some(&Value::Bool(true)),
                options: options.unwrap_or_default(),
                settings: String::new(),
            };
            // Options that are not lines stay whole in the settings.
            let keep_options = row.options.is_empty() && map.contains_key("options");
            map.retain(|key, _| {
                !OWN_KEYS.contains(&key.as_str()) || (keep_options && key == "options")
            });
            Row {
                settings: if map.is_empty() {
                    String::new()
                } else {
                    Value::Object(map).to_string()
                },
                ..row
            }
        })
        .collect()
}

/// Options as lines, when each is a value with at most a label; options
/// with descriptions or colours stay in the JSON settings instead.
fn options_text(options: &[Value]) -> Option<String> {
    let lines = options
        .iter()
        .map(|option| match option {
            Value::String(value) => Some(value.clone()),
            Value::Object(o) if o.keys().all(|k| k == "value" || k == "label") => {
                let value = o.get("value")?.as_str()?;
                Some(match o.get("label").and_then(Value::as_str) {
                    Some(label) if label != value => format!("{value} | {label}"),
                    _ => value.to_owned(),
                })
            }
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(lines.join("\n"))
}

/// The rows as posted: `count` rows named `f{i}.name`, `f{i}.label`, ...
pub(super) fn rows_posted(f: &FormData) -> Vec<Row> {
    let count = f
        .get("count")
        .and_then(|c| c.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_FIELDS);
    (0..count)
        .map(|i| {
            let text = |key: &str| f.text(&format!("f{i}.{key}")).to_owned();
            Row {
                name: text("name"),
                label: text("label"),
                kind: text("type"),
                required: f.checked(&format!("f{i}.required")),
                editable: f.checked(&format!("f{i}.editable")),
                options: text("options"),
                settings: text("settings"),
            }
        })
        .collect()
}

/// What the builder's buttons ask for besides saving.
pub(super) enum Change {
    Add,
    Remove(usize),
}

impl Change {
    pub(super) fn of(f: &FormData) -> Option<Self> {
        match f.get("do") {
            Some("add") => Some(Self::Add),
            Some(other) => other
                .strip_prefix("remove:")
                .and_then(|i| i.parse().ok())
                .map(Self::Remove),
            None => None,
        }
    }

    pub(super) fn apply(self, rows: &mut Vec<Row>) {
        match self {
            Self::Add if rows.len() < MAX_FIELDS => rows.push(Row::blank()),
            Self::Add => {}
            Self::Remove(i) if i < rows.len() => {
                rows.remove(i);
            }
            Self::Remove(_) => {}
        }
    }
}

/// The `fields` JSON of the rows that were written in, with the row each
/// field came from (for messages), or the problems of the rows whose own
/// controls do not read (settings that are not a JSON object); the
/// service checks the rest and says what is wrong.
pub(super) fn fields_json(rows: &[Row]) -> Result<(Value, Vec<usize>), Vec<String>> {
    let mut fields = Vec::new();
    let mut from_rows = Vec::new();
    let mut problems = Vec::new();
    for (i, row) in rows.iter().enumerate().filter(|(_, r)| !r.is_blank()) {
        let settings = row.settings.trim();
        let mut field = if settings.is_empty() {
            Map::new()
        } else {
            match serde_json::from_str::<Value>(settings) {
                Ok(Value::Object(map)) => map,
                _ => {
                    problems.push(format!(
                        "Field {}: “More settings” must be a JSON object, such as {{\"max_length\": 500}}",
                        i + 1
                    ));
                    continue;
                }
            }
        };
        field.insert("name".into(), Value::from(row.name.trim()));
        // Without a label the API shows the name.
        if !row.label.trim().is_empty() {
            field.insert("label".into(), Value::from(row.label.trim()));
        }
        field.insert("type".into(), Value::from(row.kind.as_str()));
        field.insert("required".into(), Value::Bool(row.required));
        field.insert("editable".into(), Value::Bool(row.editable));
        let options: Vec<Value> = row
            .options
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|line| match line.split_once('|') {
                Some((value, label)) => {
                    serde_json::json!({"value": value.trim(), "label": label.trim()})
                }
                None => Value::from(line),
            })
            .collect();
        if !options.is_empty() {
            field.insert("options".into(), Value::Array(options));
        }
        fields.push(Value::Object(field));
        from_rows.push(i);
    }
    if problems.is_empty() {
        Ok((Value::Array(fields), from_rows))
    } else {
        Err(problems)
    }
}

/// The service's messages about `fields[2].options` in the builder's
/// words: "Field 4: “Options” ..." (`from_rows` gives the row of each
/// field sent, since blank rows were left out).
pub(super) fn in_builder_words(message: &str, from_rows: &[usize]) -> String {
    let Some(rest) = message.strip_prefix("fields[") else {
        return message.to_owned();
    };
    let Some((index, rest)) = rest.split_once(']') else {
        return message.to_owned();
    };
    let Ok(index) = index.parse::<usize>() else {
        return message.to_owned();
    };
    let row = from_rows.get(index).copied().unwrap_or(index);
    let field = format!("Field {}", row + 1);
    let Some(rest) = rest.strip_prefix('.') else {
        return format!("{field}{rest}");
    };
    let (key, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    let label = match key {
        "name" => "Name",
        "label" => "Label",
        "type" => "Type",
        "options" => "Options",
        "required" => "Required",
        "editable" => "Editable",
        _ => return format!("{field}: “More settings” {key} {tail}"),
    };
    format!("{field}: “{label}” {tail}")
}

/// The rows as controls, with a button to remove each and one to add.
pub(super) fn render(rows: &[Row]) -> Markup {
    html! {
        // Enter in a field presses a form's first button: let that be
        // saving, never "Remove field 1".
        button.visually-hidden type="submit" name="do" value="save" tabindex="-1" aria-hidden="true" { "Save" }
        input type="hidden" name="count" value=(rows.len());
        ol.field-rows {
            @for (i, row) in rows.iter().enumerate() {
                li {
                    fieldset.field-row {
                        legend { "Field " (i + 1) }
                        div.field-grid {
                            label { "Name " small { "(its key in the result)" }
                                input type="text" name={ "f" (i) ".name" } value=(row.name) maxlength="64"
                                    pattern="[A-Za-z0-9_\\-]+" title="Letters, digits, _ and -" spellcheck="false"; }
                            label { "Label " small { "(what reviewers read)" }
                                input type="text" name={ "f" (i) ".label" } value=(row.label) maxlength="200"; }
                            label { "Type"
                                select name={ "f" (i) ".type" } {
                                    @for (value, words) in TYPES {
                                        option value=(value) selected[row.kind == value] { (words) }
                                    }
                                }
                            }
                        }
                        div.field-flags {
                            label.check { input type="checkbox" name={ "f" (i) ".required" } value="true" checked[row.required]; " Required" }
                            label.check { input type="checkbox" name={ "f" (i) ".editable" } value="true" checked[row.editable];
                                " Pre-filled from the content, for the reviewer to correct" }
                        }
                        label { "Options " small { "(for the select types: one a line, " code { "value" } " or " code { "value | label" } ")" }
                            textarea name={ "f" (i) ".options" } rows="3" spellcheck="false" { (row.options) } }
                        label { "More settings " small { "(JSON, optional: " code { "{\"max_length\": 500}" } ", " code { "{\"scale_max\": 10}" } ", " code { "{\"min\": 0}" } ")" }
                            input.code type="text" name={ "f" (i) ".settings" } value=(row.settings) spellcheck="false"; }
                        button.link.danger type="submit" name="do" value={ "remove:" (i) } formnovalidate { "Remove field " (i + 1) }
                    }
                }
            }
        }
        @if rows.len() < MAX_FIELDS {
            button.secondary type="submit" name="do" value="add" formnovalidate { "Add a field" }
        }
    }
}

/// Rows for a new template: one field to start from.
pub(super) fn first_rows() -> Vec<Row> {
    vec![Row::blank()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn saved_fields_read_back_as_the_same_fields() {
        let fields = json!([
            {"name": "post", "type": "content_display", "label": "The post"},
            {"name": "tone", "type": "single_select", "label": "Tone", "required": true,
             "options": ["calm", {"value": "sharp", "label": "Sharp words"}]},
            {"name": "colour", "type": "single_select", "label": "Colour",
             "options": [{"value": "r", "label": "Red", "color": "#ff0000"}]},
            {"name": "note", "type": "text", "label": "Note", "max_length": 200, "editable": true}
        ]);
        let form = Form::parse(&fields).unwrap();
        let rows = rows_of(&form);
        assert_eq!(rows[1].options, "calm\nsharp | Sharp words");
        assert!(rows[2].options.is_empty(), "kept whole in the settings");
        assert!(rows[2].settings.contains("#ff0000"));
        assert!(rows[3].settings.contains("\"max_length\":200"));
        let back = Form::parse(&fields_json(&rows).unwrap().0).unwrap();
        assert_eq!(back, form);
    }

    #[test]
    fn blank_rows_are_left_out_and_bad_settings_are_named() {
        let mut rows = first_rows();
        Change::Add.apply(&mut rows);
        rows[1].name = "ok".into();
        rows[1].label = "OK?".into();
        let (fields, from_rows) = fields_json(&rows).unwrap();
        assert_eq!(fields.as_array().unwrap().len(), 1);
        assert_eq!(from_rows, vec![1], "the field sent first is row 2");
        assert_eq!(
            in_builder_words("fields[0].name is taken", &from_rows),
            "Field 2: “Name” is taken"
        );
        rows[1].settings = "[1]".into();
        let problems = fields_json(&rows).unwrap_err();
        assert!(
            problems[0].starts_with("Field 2: “More settings”"),
            "{problems:?}"
        );
        Change::Remove(0).apply(&mut rows);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].name, "ok");
    }

    #[test]
    fn messages_name_the_row_and_its_control() {
        assert_eq!(
            in_builder_words("fields[2].options must not be empty", &[0, 1, 2]),
            "Field 3: “Options” must not be empty"
        );
        assert_eq!(
            in_builder_words("fields[0].scale_max must be a number", &[0]),
            "Field 1: “More settings” scale_max must be a number"
        );
        assert_eq!(
            in_builder_words("name is required", &[]),
            "name is required"
        );
    }
}
