//! The bootstrap of a program started without a launcher: rank 0 of 1.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{BootError, Bootstrap};

/// A one-PE job: collectives are no-ops and the key-value store is local. Keys and values
/// obey the same rules as with a launcher, so a program does not behave differently.
#[derive(Debug)]
pub struct Singleton {
    job_id: String,
    kvs: Mutex<HashMap<String, String>>,
}

impl Singleton {
    /// A new single-PE job named `single-<pid>-<nanoseconds since the epoch, hex>`.
    pub fn new() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Singleton {
            job_id: format!("single-{}-{nanos:x}", std::process::id()),
            kvs: Mutex::new(HashMap::new()),
        }
    }
}

impl Default for Singleton {
    fn default() -> Self {
        Self::new()
    }
}

impl Bootstrap for Singleton {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn job_id(&self) -> &str {
        &self.job_id
    }

    fn nodes(&self) -> Option<&[usize]> {
        Some(&[0])
    }

    fn put(&self, key: &str, value: &str) -> Result<(), BootError> {
        crate::check_key(key)?;
        crate::check_value(value, crate::MAX_VALUE_LEN)?;
        self.kvs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn fence(&self) -> Result<(), BootError> {
        Ok(())
    }

    fn get(&self, rank: usize, key: &str) -> Result<String, BootError> {
        crate::check_rank(rank, 1)?;
        crate::check_key(key)?;
        self.kvs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
            .ok_or_else(|| BootError::NotFound {
                rank,
                key: key.to_owned(),
                msg: "not put in this single-PE job".into(),
            })
    }

    fn barrier(&self) -> Result<(), BootError> {
        Ok(())
    }

    fn abort(&self, code: i32, msg: &str) -> ! {
        crate::print_abort_msg(msg);
        std::process::exit(crate::exit_status(code))
    }

    fn finalize(&self) -> Result<(), BootError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_pe_kvs() {
        let s = Singleton::new();
        assert_eq!((s.rank(), s.size()), (0, 1));
        assert!(s.job_id().starts_with("single-"));
        s.put("k", "v").unwrap();
        s.fence().unwrap();
        assert_eq!(s.get(0, "k").unwrap(), "v");
        assert!(matches!(s.get(0, "x"), Err(BootError::NotFound { .. })));
        assert!(matches!(
            s.get(1, "k"),
            Err(BootError::RankOutOfRange { .. })
        ));
        assert!(s.put("k", "a b").is_err());
        s.barrier().unwrap();
        s.finalize().unwrap();
        s.finalize().unwrap();
    }
}
