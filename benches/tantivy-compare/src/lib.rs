//! Tantivy beside the skill router's own index (issue 39 item 1): the same
//! skills, read the same way (`bcode_skill::SkillText`: name,
//! description + `when_to_use`, keywords + `argument-hint`, file names,
//! body), indexed by tantivy in five text fields of the router's weights,
//! and ranked as tantivy ranks: BM25 per field (k1 = 1.2, b = 0.75 in
//! every field: tantivy fixes both), the fields' scores summed with the
//! router's weights as boosts.
//!
//! Words are cut by the router's own cutter (`for_each_word`: identifier
//! splitting, extensions, CJK pairs), then tantivy's English stop words
//! (Lucene's 33) and its English Snowball stemmer ([`Analysis::Tantivy`]);
//! or by the router's whole analysis, its stop words and stemming too
//! ([`Analysis::Router`]), which leaves only the scoring apart.

use std::path::{Path, PathBuf};

use bcode_skill::{Normalizer, SkillText, for_each_word, other_files};
use bcode_skill::{Discovery, DiscoveryOptions, SkillRegistry, SourceRoot};
use bcode_prompt_config::SkillsConfig;
use bcode_skill_models::{SkillLayout, SkillSource, SkillSummary, SourceKind};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{
    Language, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use tantivy::{Index, IndexReader, IndexWriter, Searcher, TantivyDocument, Term};

#[path = "../../src/route_eval.rs"]
pub mod route_eval;
pub mod variants;

/// The router's field weights (`search/index.rs`), by
/// `bcode_skill::SearchField::index`.
pub const WEIGHTS: [f32; 5] = [3.0, 2.0, 2.0, 1.0, 1.0];

/// The tantivy field names, in the router's field order.
pub const FIELD_NAMES: [&str; 5] = ["name", "description", "keywords", "files", "body"];

/// The tokenizer's name in the index's tokenizer manager.
const TOKENIZER: &str = "skill";

/// `bcode_benches::roots_for`: each path a configured root, in order.
pub fn roots_for(paths: &[PathBuf]) -> Vec<SourceRoot> {
    paths
        .iter()
        .enumerate()
        .map(|(ordinal, path)| {
            let name = path
                .file_name()
                .map_or_else(|| ordinal.to_string(), |n| n.to_string_lossy().into_owned());
            SourceRoot {
                source: SkillSource {
                    kind: SourceKind::Config,
                    label: format!("config:{name}"),
                    ordinal,
                    root: None,
                    provider: None,
                },
                path: path.clone(),
                repository: None,
                owner_check: None,
            }
        })
        .collect()
}

/// Discovery as `route_eval` and the product run it.
pub fn discover(roots: &[SourceRoot]) -> SkillRegistry {
    let options = DiscoveryOptions::from_config(&SkillsConfig::default());
    Discovery::new(options).build(roots)
}

/// One skill's fields as the router's index reads them (`search::gather`).
pub fn skill_text(registry: &SkillRegistry, skill: &SkillSummary) -> SkillText {
    let (body, files) = match skill.layout {
        SkillLayout::Provided => (None, Vec::new()),
        SkillLayout::Flat => (registry.body(skill).ok(), Vec::new()),
        _ => (registry.body(skill).ok(), other_files(skill)),
    };
    SkillText::with_body(skill, body, &files)
}

/// How words become terms in the tantivy index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Analysis {
    /// The router's word cutter, then tantivy's English stop words and
    /// stemmer.
    Tantivy,
    /// The router's whole analysis (its cutter, stop words and stemming).
    Router,
}

/// A tantivy tokenizer over the router's word cutter; with `normalize`,
/// each word goes through the router's `Normalizer` too.
#[derive(Clone)]
struct RouterWords {
    normalize: bool,
}

struct VecStream {
    tokens: Vec<Token>,
    at: usize,
}

impl TokenStream for VecStream {
    fn advance(&mut self) -> bool {
        if self.at < self.tokens.len() {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.at - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at - 1]
    }
}

impl Tokenizer for RouterWords {
    type TokenStream<'a> = VecStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecStream {
        let mut tokens = Vec::new();
        let mut normalizer = self.normalize.then(Normalizer::new);
        let mut push = |word: &str| {
            tokens.push(Token {
                offset_from: 0,
                offset_to: 0,
                position: tokens.len(),
                text: word.to_owned(),
                position_length: 1,
            })
        };
        for_each_word(text, &mut |word| match normalizer.as_mut() {
            Some(n) => {
                if let Some(term) = n.term(word) {
                    push(term);
                }
            }
            None => push(word),
        });
        VecStream { tokens, at: 0 }
    }
}

fn analyzer(analysis: Analysis) -> TextAnalyzer {
    match analysis {
        Analysis::Tantivy => {
            let mut builder = TextAnalyzer::builder(RouterWords { normalize: false }).dynamic();
            if let Some(stop) = StopWordFilter::new(Language::English) {
                builder = builder.filter_dynamic(stop);
            }
            builder
                .filter_dynamic(Stemmer::new(Language::English))
                .build()
        }
        Analysis::Router => TextAnalyzer::builder(RouterWords { normalize: true }).build(),
    }
}

/// The schema: an id (stored, for the results) and the five fields.
pub struct Fields {
    pub schema: Schema,
    pub id: Field,
    pub text: [Field; 5],
}

pub fn fields() -> Fields {
    let mut builder = Schema::builder();
    let id = builder.add_text_field("id", STRING | STORED);
    let options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_fieldnorms(true)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let text = FIELD_NAMES.map(|name| builder.add_text_field(name, options.clone()));
    Fields {
        schema: builder.build(),
        id,
        text,
    }
}

/// A tantivy index of a registry's skills, queried as the router is.
pub struct TantivyIndex {
    pub index: Index,
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
}

/// Where to build: in memory (the quality runs) or a folder.
pub enum Place<'a> {
    Ram,
    Dir(&'a Path),
}

impl TantivyIndex {
    /// Indexes every skill of `registry` with `threads` indexing threads
    /// and `heap` bytes of indexing memory in all, `threads` readers
    /// feeding them; commits and waits for the merges.
    pub fn build(
        registry: &SkillRegistry,
        place: Place<'_>,
        analysis: Analysis,
        threads: usize,
        heap: usize,
    ) -> tantivy::Result<TantivyIndex> {
        let fields = fields();
        let index = match place {
            Place::Ram => Index::create_in_ram(fields.schema.clone()),
            Place::Dir(dir) => Index::create_in_dir(dir, fields.schema.clone())?,
        };
        index.tokenizers().register(TOKENIZER, analyzer(analysis));
        let mut writer: IndexWriter = index.writer_with_num_threads(threads, heap)?;
        let skills: Vec<&SkillSummary> = registry.skills().collect();
        let chunk = skills.len().div_ceil(threads.max(1)).max(1);
        let added: tantivy::Result<()> = std::thread::scope(|scope| {
            let workers: Vec<_> = skills
                .chunks(chunk)
                .map(|part| {
                    let writer = &writer;
                    let fields = &fields;
                    scope.spawn(move || -> tantivy::Result<()> {
                        for skill in part {
                            let text = skill_text(registry, skill);
                            let mut doc = TantivyDocument::default();
                            doc.add_text(fields.id, skill.manifest.id.as_str());
                            for (field, value) in fields.text.iter().zip(&text.fields) {
                                doc.add_text(*field, value);
                            }
                            writer.add_document(doc)?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for worker in workers {
                worker
                    .join()
                    .map_err(|_| tantivy::TantivyError::InternalError("worker".into()))??;
            }
            Ok(())
        });
        added?;
        writer.commit()?;
        writer.wait_merging_threads()?;
        TantivyIndex::from_index(index, analysis)
    }

    /// An index built before, read back from `dir` (memory-mapped).
    pub fn open(dir: &Path, analysis: Analysis) -> tantivy::Result<TantivyIndex> {
        let index = Index::open_in_dir(dir)?;
        TantivyIndex::from_index(index, analysis)
    }

    fn from_index(index: Index, analysis: Analysis) -> tantivy::Result<TantivyIndex> {
        let analyzer = analyzer(analysis);
        index.tokenizers().register(TOKENIZER, analyzer.clone());
        let reader = index.reader()?;
        Ok(TantivyIndex {
            index,
            reader,
            fields: fields(),
            analyzer,
        })
    }

    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    pub fn segments(&self) -> usize {
        self.searcher().segment_readers().len()
    }

    /// The query: each distinct term of the task once per field, boosted
    /// by the field's weight and, as the router does, by
    /// `1 + ln(repeats)` of the term in the task.
    pub fn query(&self, task: &str) -> BooleanQuery {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(task);
        let mut order: Vec<String> = Vec::new();
        let mut counts: std::collections::HashMap<String, u32> = Default::default();
        while stream.advance() {
            let text = &stream.token().text;
            let count = counts.entry(text.clone()).or_insert(0);
            if *count == 0 {
                order.push(text.clone());
            }
            *count += 1;
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for term in &order {
            let repeats = counts.get(term).copied().unwrap_or(1) as f32;
            for (field, weight) in self.fields.text.iter().zip(WEIGHTS) {
                let query = TermQuery::new(
                    Term::from_field_text(*field, term),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(query),
                        weight * (1.0 + repeats.ln()),
                    )),
                ));
            }
        }
        BooleanQuery::new(clauses)
    }

    /// The ids of the best `limit` skills for `task`, best first.
    pub fn search(&self, searcher: &Searcher, task: &str, limit: usize) -> Vec<String> {
        let query = self.query(task);
        let Ok(top) = searcher.search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())
        else {
            return Vec::new();
        };
        top.into_iter()
            .filter_map(|(_, address)| {
                let doc: TantivyDocument = searcher.doc(address).ok()?;
                doc.get_first(self.fields.id)
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            })
            .collect()
    }
}

/// The bytes of every file under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => dir_bytes(&entry.path()),
            Ok(_) => entry.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

/// The two latency tasks of `benches/benches/search.rs`: a short task as
/// a user types one.
pub const SHORT: &str = "convert the quarterly report pdf into a spreadsheet and chart it";

/// ... and an issue with a pasted log (about 6 KB).
pub fn long_task() -> String {
    let mut task = String::from(
        "The deployment pipeline fails after the kubernetes upgrade; the helm chart \
         renders but the migration job cannot reach postgres. Find out why and fix the \
         terraform module that provisions the database.\n",
    );
    for i in 0..60 {
        task.push_str(&format!(
            "2026-12-03T10:{i:02}:00Z ERROR migrate: connection refused (postgres:5432) \
             retry {i} of 60 in job db-migrate-{i}\n"
        ));
    }
    task
}
