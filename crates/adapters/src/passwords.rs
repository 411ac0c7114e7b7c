//! Password hashing with Argon2id.

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::rngs::OsRng;
use rand::RngCore;
use reviewloop_ports::{HashError, PasswordHasher};

/// Argon2id with the crate's defaults (19 MiB, 2 passes, 1 lane: OWASP's
/// recommended minimum), a 16-byte random salt, PHC string format. The
/// format names its parameters, so raising them later keeps old hashes
/// verifiable.
#[derive(Debug, Clone, Copy, Default)]
pub struct Argon2Passwords;

impl PasswordHasher for Argon2Passwords {
    fn hash(&self, password: &str) -> Result<String, HashError> {
        let mut salt = [0u8; 16];
        OsRng.fill_bytes(&mut salt);
        let salt = SaltString::encode_b64(&salt).map_err(|e| HashError(e.to_string()))?;
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| HashError(e.to_string()))
    }

    fn verify(&self, password: &str, hash: &str) -> bool {
        PasswordHash::new(hash)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let hash = Argon2Passwords.hash("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(Argon2Passwords.verify("correct horse", &hash));
        assert!(!Argon2Passwords.verify("correct horsf", &hash));
        assert!(!Argon2Passwords.verify("correct horse", "not a hash"));
        // A fresh salt each time.
        assert_ne!(hash, Argon2Passwords.hash("correct horse").unwrap());
    }
}
