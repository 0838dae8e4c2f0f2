//! Binary-size probe: discovery and the router's index, one query. Its
//! size against `size_tantivy`'s and `size_both`'s is what tantivy adds to
//! a release binary (the workspace's release profile: fat LTO, stripped).

fn main() {
    let paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    let registry = tantivy_compare::discover(&tantivy_compare::roots_for(&paths));
    let index = bcode_skill::index_registry(&registry, None);
    for hit in index.search(tantivy_compare::SHORT, 10) {
        println!("{}", hit.id.as_str());
    }
}
