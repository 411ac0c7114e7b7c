//! Routes that need no API key: the health check, the QR code image and
//! the join page. An invite code is a shared secret by design: whoever has
//! it may join, so showing its QR code and page to anyone adds nothing.

use actix_web::http::header::{CacheControl, CacheDirective, ContentType};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::envelope::ok;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) async fn health() -> HttpResponse {
    ok(StatusCode::OK, "ok", json!({"status": "ok"}))
}

pub(super) async fn qr_png(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let code = path.strip_suffix(".png").unwrap_or(&path);
    let png = state.loops.qr_png(code).await?;
    Ok(HttpResponse::Ok()
        .content_type("image/png")
        // A code can be regenerated; keep caches short.
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(300),
        ]))
        .body(png))
}

fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

pub(super) async fn join_page(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let lp = state.loops.loop_for_code(&path).await?;
    let base = escape(state.loops.public_url());
    let code = escape(lp.invite_code.as_str());
    let name = escape(lp.name.as_str());
    let icon = escape(lp.icon.as_str());
    let description = lp
        .description
        .as_ref()
        .map(|d| format!("<p>{}</p>", escape(d.as_str())))
        .unwrap_or_default();
    let page = format!(
        r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Join {name} on reviewloop</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}
code,pre{{background:#f3f3f3;border-radius:4px;padding:.1rem .3rem}}pre{{padding:1rem;overflow-x:auto}}
.code{{font-size:2rem;letter-spacing:.3rem;font-weight:bold}}</style></head>
<body>
<h1>{icon} {name}</h1>
{description}
<p>You have been invited to review requests in this loop. Your invite code is:</p>
<p class="code">{code}</p>
<p>To join, send the code with your own reviewloop API key:</p>
<pre>curl -X POST {base}/v1/api/loops/join \
  -H "Authorization: Bearer YOUR_API_KEY" \
  -H "Content-Type: application/json" \
  -d '{{"invite_code": "{code}"}}'</pre>
<p>Once you have joined, every new request in this loop appears in your inbox
(<code>GET /v1/api/inbox</code>). Ask the person who invited you for an API key if you have none.</p>
</body>
</html>"#
    );
    Ok(HttpResponse::Ok()
        .content_type(ContentType::html())
        .body(page))
}
