//! People signing in to the web application: the password rule.

use crate::error::ValidationError;
use crate::text::char_len;

/// Fewest characters a password may have.
pub const PASSWORD_MIN_CHARS: usize = 8;
/// Most characters a password may have: hashing is deliberately slow, and
/// an unbounded input would make it a lever for denial of service.
pub const PASSWORD_MAX_CHARS: usize = 256;

/// A password a person chose, checked against the rule. It is never
/// stored or shown: only its hash is kept, and `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Accepts 8 to 256 characters that are not all spaces. No composition
    /// rules: length is what makes a password strong (NIST SP 800-63B).
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let n = char_len(raw);
        if n < PASSWORD_MIN_CHARS {
            return Err(ValidationError::field(
                "password",
                format!("password must be at least {PASSWORD_MIN_CHARS} characters"),
            ));
        }
        if n > PASSWORD_MAX_CHARS {
            return Err(ValidationError::field(
                "password",
                format!("password must be at most {PASSWORD_MAX_CHARS} characters"),
            ));
        }
        if raw.trim().is_empty() {
            return Err(ValidationError::field(
                "password",
                "password must not be only spaces",
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The password, for hashing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_is_the_rule() {
        assert!(Password::parse("short").is_err());
        assert!(Password::parse("        ").is_err());
        assert!(Password::parse(&"x".repeat(257)).is_err());
        assert_eq!(
            Password::parse("correct horse").map(|p| p.expose().to_owned()),
            Ok("correct horse".to_owned())
        );
        // Characters, not bytes: eight accented letters are enough.
        assert!(Password::parse("éééééééé").is_ok());
    }

    #[test]
    fn debug_hides_it() {
        let p = Password::parse("hunter2hunter2").unwrap();
        assert!(!format!("{p:?}").contains("hunter2"));
    }
}
