//! A person in a browser, as far as plain HTTP goes: a cookie jar, the
//! forms' hidden tokens, and redirects followed like a browser does.

use std::time::Duration;

use reqwest::blocking::{Client, Response};

use super::Server;

pub struct Person {
    pub client: Client,
    pub base: String,
}

/// The value of the first `name="csrf"` field in a page.
pub fn csrf_of(html: &str) -> String {
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("a form with a csrf field") + marker.len();
    html[start..start + 64].to_owned()
}

impl Person {
    pub fn new(server: &Server) -> Self {
        Self {
            client: Client::builder()
                .cookie_store(true)
                .timeout(Duration::from_secs(30))
                .build()
                .expect("client"),
            base: server.base.clone(),
        }
    }

    pub fn get(&self, path: &str) -> Response {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .expect("GET")
    }

    /// GETs `path` and returns its status and body.
    pub fn page(&self, path: &str) -> (u16, String) {
        let r = self.get(path);
        (r.status().as_u16(), r.text().expect("body"))
    }

    /// Sends a form as the browser would from `page_path`: with that page's
    /// token and this site as Origin.
    pub fn submit(&self, page_path: &str, action: &str, fields: &[(&str, &str)]) -> Response {
        let (_, html) = self.page(page_path);
        let token = csrf_of(&html);
        let mut form: Vec<(&str, &str)> = vec![("csrf", token.as_str())];
        form.extend_from_slice(fields);
        self.post_raw(action, &form, Some(&self.base))
    }

    /// A POST with exactly these fields and this Origin (none if `None`).
    pub fn post_raw(&self, action: &str, form: &[(&str, &str)], origin: Option<&str>) -> Response {
        let mut request = self
            .client
            .post(format!("{}{action}", self.base))
            .form(form);
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        request.send().expect("POST")
    }

    /// Signs in; panics unless it works.
    pub fn sign_in(&self, email: &str, password: &str) {
        let r = self.submit(
            "/login",
            "/login",
            &[("email", email), ("password", password)],
        );
        assert_eq!(r.url().path(), "/app", "signed in and sent to the inbox");
    }
}

impl Server {
    /// Sets a password from the CLI (read from stdin).
    pub fn set_password(&self, email: &str, password: &str) {
        use std::io::Write;
        let mut child = std::process::Command::new(super::BIN)
            .args(["user", "set-password", "--email", email, "--json"])
            .args(["--database-url", &self.db_url])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run cli");
        writeln!(child.stdin.take().expect("stdin"), "{password}").expect("write password");
        let out = child.wait_with_output().expect("cli output");
        assert!(
            out.status.success(),
            "set-password failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The first-start password link, as printed.
    pub fn setup_link(&self) -> String {
        self.stderr
            .lock()
            .unwrap()
            .iter()
            .find_map(|l| {
                l.strip_prefix("reviewloop: set the admin password at: ")
                    .map(str::to_owned)
            })
            .expect("setup link on first start")
    }
}
