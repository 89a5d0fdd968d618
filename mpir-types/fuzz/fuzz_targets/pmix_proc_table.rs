#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mpir_types_fuzz::pmix_proc_table(data));
