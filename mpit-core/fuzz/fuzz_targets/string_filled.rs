#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpit_core_fuzz::string_filled(data));
