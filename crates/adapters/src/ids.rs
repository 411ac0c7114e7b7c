//! Randomness from the operating system's generator.

use chrono::{DateTime, Utc};
use rand::rngs::OsRng;
use rand::RngCore;
use reviewloop_domain::{InviteCode, ObjectId};
use reviewloop_ports::IdSource;

/// Ids, invite codes and secrets from the OS random generator.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn object_id(&self, now: DateTime<Utc>) -> ObjectId {
        let mut random = [0u8; 8];
        OsRng.fill_bytes(&mut random);
        ObjectId::from_parts(now.timestamp(), random)
    }

    fn invite_code(&self) -> InviteCode {
        let mut random = [0u8; 6];
        OsRng.fill_bytes(&mut random);
        InviteCode::from_random(random)
    }

    fn jitter(&self) -> f64 {
        f64::from(OsRng.next_u32()) / f64::from(u32::MAX) * 2.0 - 1.0
    }

    fn secret_hex(&self, bytes: usize) -> String {
        let mut random = vec![0u8; bytes];
        OsRng.fill_bytes(&mut random);
        hex::encode(random)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_secrets_differ_each_time() {
        let now = Utc::now();
        assert_ne!(RandomIds.object_id(now), RandomIds.object_id(now));
        assert_eq!(
            RandomIds.object_id(now).unix_seconds() as i64,
            now.timestamp()
        );
        let secret = RandomIds.secret_hex(24);
        assert_eq!(secret.len(), 48);
        assert_ne!(secret, RandomIds.secret_hex(24));
        assert_eq!(RandomIds.invite_code().as_str().len(), 6);
    }
}
