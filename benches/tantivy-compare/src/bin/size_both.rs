//! Binary-size probe: `size_ours` and `size_tantivy` in one binary.

use tantivy_compare::{Analysis, Place, TantivyIndex};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else { return };
    let paths: Vec<std::path::PathBuf> = args.map(Into::into).collect();
    let registry = tantivy_compare::discover(&tantivy_compare::roots_for(&paths));
    let index = bcode_skill::index_registry(&registry, None);
    for hit in index.search(tantivy_compare::SHORT, 10) {
        println!("{}", hit.id.as_str());
    }
    let place = Place::Dir(std::path::Path::new(&dir));
    let Ok(theirs) = TantivyIndex::build(&registry, place, Analysis::Tantivy, 1, 50_000_000) else {
        return;
    };
    for id in theirs.search(&theirs.searcher(), tantivy_compare::SHORT, 10) {
        println!("{id}");
    }
}
