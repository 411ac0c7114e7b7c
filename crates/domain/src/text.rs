//! Small helpers shared by the validating constructors, and the one rule on
//! control characters in text fields.
//!
//! Text that people read as a line (names, icons, emails, versions) may hold
//! no control character at all; prose (descriptions, request text, comments)
//! may hold tab, line feed and carriage return and nothing else of the kind.
//! Free-form JSON (`context`, `metadata`, answers) is not text in this sense:
//! it is kept exactly as sent, control characters included.

use crate::error::ValidationError;

/// Length in characters (not bytes), which is what users mean by "length".
pub(crate) fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Refuses any control character in one-line text.
pub(crate) fn check_line(field: &str, s: &str) -> Result<(), ValidationError> {
    if s.chars().any(char::is_control) {
        return Err(ValidationError::field(
            field,
            format!("{field} must not contain control characters"),
        ));
    }
    Ok(())
}

/// Refuses control characters other than tab, line feed and carriage return.
pub(crate) fn check_prose(field: &str, s: &str) -> Result<(), ValidationError> {
    if s.chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(ValidationError::field(
            field,
            format!("{field} must not contain control characters other than tab and line breaks"),
        ));
    }
    Ok(())
}

const MAX_URL_LEN: usize = 2048;

/// Checks that a URL is an absolute http(s) URL with a host. Where it may
/// point is a matter for delivery, not for the domain.
pub(crate) fn parse_http_url(field: &str, raw: &str) -> Result<String, ValidationError> {
    let url = raw.trim();
    let fail = || ValidationError::field(field, format!("{field} must be an http or https URL"));
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(fail)?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty()
        || url.len() > MAX_URL_LEN
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(fail());
    }
    Ok(url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_refuse_every_control_character_and_prose_keeps_line_breaks() {
        for bad in [
            "a\0b",
            "a\nb",
            "tab\there",
            "\u{7f}",
            "\u{85}",
            "\u{1b}[31m",
        ] {
            assert!(check_line("name", bad).is_err(), "{bad:?}");
        }
        assert!(check_line("name", "Blog moderation 🔁 ünïcode").is_ok());
        for good in ["line\nbreak", "crlf\r\n", "tab\there", "plain"] {
            assert!(check_prose("request_text", good).is_ok(), "{good:?}");
        }
        for bad in ["a\0b", "bell\u{7}", "\u{1b}[31mred", "\u{9f}"] {
            let error = check_prose("request_text", bad).unwrap_err();
            assert_eq!(error.errors[0].field, "request_text", "{bad:?}");
        }
    }
}

/// The longest comment a reviewer may leave with an answer, in characters.
pub const MAX_COMMENT_CHARS: usize = 2000;

/// A reviewer's comment on an answer, as the requester reads it: prose of
/// at most [`MAX_COMMENT_CHARS`], trimmed; blank means none.
pub fn parse_comment(raw: Option<&str>) -> Result<Option<String>, ValidationError> {
    let Some(comment) = raw.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    if char_len(comment) > MAX_COMMENT_CHARS {
        return Err(ValidationError::field(
            "comment",
            format!("comment must be at most {MAX_COMMENT_CHARS} characters"),
        ));
    }
    check_prose("comment", comment)?;
    Ok(Some(comment.to_owned()))
}

#[cfg(test)]
mod comment_tests {
    use super::*;

    #[test]
    fn a_comment_is_trimmed_prose_of_bounded_length() {
        assert_eq!(parse_comment(None).unwrap(), None);
        assert_eq!(parse_comment(Some("  \n ")).unwrap(), None);
        assert_eq!(
            parse_comment(Some("  fine,\nbut fix the title ")).unwrap(),
            Some("fine,\nbut fix the title".to_owned())
        );
        let longest = "é".repeat(MAX_COMMENT_CHARS);
        assert_eq!(parse_comment(Some(&longest)).unwrap(), Some(longest));
        let too_long = parse_comment(Some(&"a".repeat(MAX_COMMENT_CHARS + 1))).unwrap_err();
        assert_eq!(too_long.errors[0].field, "comment");
        assert!(parse_comment(Some("bell \u{7}")).is_err());
    }
}
