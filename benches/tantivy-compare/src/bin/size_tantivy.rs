//! Binary-size probe: discovery and a tantivy index written to a folder
//! (memory-mapped), one query; see `size_ours`.

use tantivy_compare::{Analysis, Place, TantivyIndex};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else { return };
    let paths: Vec<std::path::PathBuf> = args.map(Into::into).collect();
    let registry = tantivy_compare::discover(&tantivy_compare::roots_for(&paths));
    let place = Place::Dir(std::path::Path::new(&dir));
    let Ok(index) = TantivyIndex::build(&registry, place, Analysis::Tantivy, 1, 50_000_000) else {
        return;
    };
    for id in index.search(&index.searcher(), tantivy_compare::SHORT, 10) {
        println!("{id}");
    }
}
