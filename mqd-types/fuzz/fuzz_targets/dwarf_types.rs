#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mqd_types_fuzz::dwarf_types(data));
