mod names {
    use casebook_build::vocabulary;
    include!("src/names.rs");
}

fn main() {
    casebook_build::scenario(names::VOCABULARY);
}
