// New migration files do not change any Rust source, so tell Cargo to
// rebuild the embedded migrations when they change.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
