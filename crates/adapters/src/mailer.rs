//! Email through an SMTP server.

use std::time::Duration;

use async_trait::async_trait;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use reviewloop_ports::{Mail, Mailer};

/// How long one conversation with the server may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(15);

/// Sends through the server of `REVIEWLOOP_SMTP_URL`: `smtp://` in the
/// clear (add `?tls=required` for STARTTLS), `smtps://` over TLS, with
/// `user:password@` when the server wants a login.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpMailer {
    /// A mailer for `url` sending as `from`; refuses a URL or address it
    /// cannot use, saying why.
    pub fn new(url: &str, from: &str) -> Result<Self, String> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("REVIEWLOOP_SMTP_URL is not usable: {e}"))?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        let from = from
            .parse()
            .map_err(|e| format!("REVIEWLOOP_SMTP_FROM is not an address: {e}"))?;
        Ok(Self { transport, from })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &Mail) -> Result<(), String> {
        let to: Mailbox = mail
            .to
            .parse()
            .map_err(|e| format!("the address is not usable: {e}"))?;
        let builder = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone());
        let text = SinglePart::builder()
            .header(ContentType::TEXT_PLAIN)
            .body(mail.text.clone());
        let message = match &mail.html {
            Some(html) => builder.multipart(
                MultiPart::alternative().singlepart(text).singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(html.clone()),
                ),
            ),
            None => builder.singlepart(text),
        }
        .map_err(|e| format!("the message could not be built: {e}"))?;
        // lettre's errors name the server's answer, never the login.
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| format!("the mail server refused or could not be reached: {e}"))
    }
}
