//! Prints how the ranking does on the held-out texts, with every miss:
//! `cargo run -p casebook-explain --example heldout [INDEX]`.

fn main() -> anyhow::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let index = match std::env::args().nth(1) {
        Some(path) => casebook_explain::Index::parse(&std::fs::read_to_string(path)?)?,
        None => casebook_explain::Index::embedded()?,
    };
    let held = casebook_explain::heldout::parse(&std::fs::read_to_string(
        root.join(casebook_explain::heldout::TEXTS_TOML),
    )?)?;
    let score = casebook_explain::heldout::evaluate(&index, &held);
    println!("{}", score.summary());
    for m in &score.misses {
        println!("  miss: {m}");
    }
    Ok(())
}
