//! Arbitrary bytes as a manifest: decode, and anything accepted must
//! survive a round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lsm_demo::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    match Manifest::decode(data) {
        Ok(manifest) => {
            let again = Manifest::decode(&manifest.encode()).expect("re-encoded manifest decodes");
            assert_eq!(again, manifest);
        }
        Err(err) => {
            let _ = err.to_string();
        }
    }
});
