//! Request text from automations, rendered as Markdown for people, safely:
//! raw HTML is dropped, links may only be http(s) or mailto and open with
//! `rel="noopener nofollow"`, and nothing can run.

use std::collections::HashSet;
use std::sync::OnceLock;

use maud::PreEscaped;
use pulldown_cmark::{html, Event, Options, Parser};

fn cleaner() -> &'static ammonia::Builder<'static> {
    static CLEANER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    CLEANER.get_or_init(|| {
        let mut b = ammonia::Builder::default();
        b.link_rel(Some("noopener nofollow noreferrer"))
            .url_schemes(HashSet::from(["http", "https", "mailto"]))
            // Images from the text could track who opened the request;
            // the request's own image_url is shown on its own.
            .rm_tags(["img"]);
        b
    })
}

/// Markdown to HTML that is safe to place in a page.
pub(crate) fn render(text: &str) -> PreEscaped<String> {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    // Raw HTML in the source is shown as text, never interpreted; the
    // cleaner below is the second line of defence.
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, events);
    PreEscaped(cleaner().clean(&out).to_string())
}

/// The first line of a text that has words, read as Markdown and given as
/// those words only (for lists: `**$200**` is "$200", a link its text), at
/// most `max` characters.
pub(crate) fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(plain)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    shorten(line, max)
}

/// At most `max` characters of `text`, ending in "…" when cut.
pub(crate) fn shorten(text: String, max: usize) -> String {
    if text.chars().count() > max {
        let cut: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The most characters of a request's or review's heading.
const SUBJECT_MAX: usize = 160;

/// A page's heading made of a text's first line as words (`fallback` when
/// it has none), and whether the text must still follow it: always,
/// unless the text is one short line of plain words the heading says
/// whole.
pub(crate) fn subject(text: &str, fallback: &str) -> (String, bool) {
    let heading = first_line(text, SUBJECT_MAX);
    let trimmed = text.trim();
    let said_whole = !trimmed.contains('\n')
        && trimmed.chars().count() <= SUBJECT_MAX
        && plain(trimmed) == trimmed;
    if heading.is_empty() {
        (fallback.to_owned(), !trimmed.is_empty())
    } else {
        (heading, !said_whole)
    }
}

/// The words of one line of Markdown: its text and code, without marks,
/// link targets or HTML.
fn plain(line: &str) -> String {
    let mut words = String::new();
    for event in Parser::new(line) {
        match event {
            Event::Text(text) | Event::Code(text) => words.push_str(&text),
            Event::SoftBreak | Event::HardBreak => words.push(' '),
            _ => {}
        }
    }
    words.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_short_line_of_plain_words_is_said_whole_by_its_heading() {
        let text_follows = |text: &str| subject(text, "A request").1;
        assert!(!text_follows("  Publish this post? "));
        assert!(text_follows("Refund **$200**?"));
        assert!(text_follows("Publish this post?\n\nIt is long."));
        assert!(text_follows("See [notes](https://example.com)"));
        let long = "word ".repeat(60);
        assert!(text_follows(&long), "a heading cut short is not the text");
        assert!(subject(&long, "A request").0.ends_with('…'));
        assert_eq!(subject("<b></b>", "A request"), ("A request".into(), true));
        assert_eq!(subject("", "A request"), ("A request".into(), false));
    }

    #[test]
    fn markdown_renders_and_scripts_do_not() {
        let out = render("# Title\n\n**bold** [site](https://example.com)\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>").0;
        assert!(out.contains("<h1>Title</h1>"), "{out}");
        assert!(out.contains("<strong>bold</strong>"));
        assert!(out.contains(r#"href="https://example.com""#));
        assert!(out.contains(r#"rel="noopener nofollow noreferrer""#));
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(
            out.contains("&lt;script&gt;"),
            "raw HTML is shown as text: {out}"
        );
    }

    #[test]
    fn dangerous_links_lose_their_target() {
        let out = render("[x](javascript:alert(1)) [y](data:text/html,hi)").0;
        assert!(!out.contains("javascript:"), "{out}");
        assert!(!out.contains("data:"), "{out}");
    }

    #[test]
    fn first_lines_are_plain_and_short() {
        assert_eq!(first_line("\n## Refund #42\nmore", 80), "Refund #42");
        assert_eq!(first_line("abcdef", 4), "abc…");
        assert_eq!(
            first_line(
                "Refund **$200** to _Ana_? See [notes](https://x.example/n) and `id-7`",
                80
            ),
            "Refund $200 to Ana? See notes and id-7"
        );
        assert_eq!(
            first_line("```\n<b>raw</b> stays text", 80),
            "raw stays text"
        );
        assert_eq!(first_line("> - quoted item", 80), "quoted item");
    }
}
