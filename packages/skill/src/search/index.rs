//! The relevance index: an inverted index of skills' fields and its
//! ranking, BM25 per field, summed. Pure: documents come in as
//! [`SkillText`], queries as text; the edge that reads bodies is
//! `search::gather`.
//!
//! Each field a query term is found in scores on its own: the term's
//! inverse document frequency *in that field* (how rare it is in names,
//! in descriptions, in bodies), times its count saturated with `k1`
//! against the field's length over its average, times the field's weight;
//! a skill's score is the sum over terms and fields. A term rare in names
//! but common in bodies (`components`) so counts for much in a name and
//! little in a body, and a skill that has the task's words where its
//! author says what it is for outranks one whose long body repeats them.
//! Names and keywords weigh most and are barely length-normalised; the
//! body weighs least and is normalised most.
//!
//! Chosen by measurement over BM25F (fields' counts summed, then one
//! saturation and one IDF per skill), which this index ranked with until
//! 2026-12-05: on public sets this project did not make, the per-field sum
//! puts the right skill first far more often (`benches/README.md`,
//! "Routing quality"); it is also what tantivy and Lucene do.
//!
//! Same inputs, same ranking: a score is summed over the query's terms in
//! the order the query first names them, ties go to the smaller id, and an
//! index updated skill by skill answers exactly as one built at once (term
//! numbers may differ; no score depends on them).

use std::collections::BTreeMap;

use bcode_skill_models::SkillId;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::search::analyze::{MAX_REMEMBERED, Normalizer, for_each_term, for_each_word};
use crate::search::document::{FIELDS, SearchField, SkillText};

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;

/// Each field's weight and length normalisation (`b`), by [`SearchField::index`].
const WEIGHTS: [f32; FIELDS] = [3.0, 2.0, 2.0, 1.0, 1.0];
const NORMALISATION: [f32; FIELDS] = [0.3, 0.5, 0.3, 0.5, 0.75];

/// A query keeps at most this many distinct terms, those of highest
/// inverse document frequency: a long task (a pasted log, a 1 MB text)
/// costs its analysis, linear, and then no more than a short one.
pub const MAX_QUERY_TERMS: usize = 256;

/// One skill's counts of one term, by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Posting {
    doc: u32,
    body: u16,
    /// Name, description, keywords, files.
    small: [u8; 4],
}

impl Posting {
    fn tf(&self, field: usize) -> u32 {
        match self.small.get(field) {
            Some(&count) if field < 4 => u32::from(count),
            _ => u32::from(self.body),
        }
    }
}

#[derive(Clone, Debug)]
struct Doc {
    id: SkillId,
    /// Terms in each field, stop words left out, as the ranking counts.
    lens: [u32; FIELDS],
}

/// Why a skill ranked: one query term it matched, as the query wrote it,
/// and the fields it was found in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MatchedTerm {
    /// The query's word (the first of its words with this term).
    pub term: String,
    /// Where the skill has it, in field order.
    pub fields: Vec<SearchField>,
}

/// One ranked skill.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchHit {
    /// The skill.
    pub id: SkillId,
    /// Its score for the query (BM25 per field, summed): comparable
    /// between skills of one query, not between queries.
    pub score: f32,
    /// The share of the query's weight (the inverse document frequencies
    /// of its terms) the skill matched, from 0 to 1: comparable between
    /// queries, which is what a confidence floor needs.
    pub coverage: f32,
    /// The query terms it matched, in the query's order.
    pub matched: Vec<MatchedTerm>,
}

/// An inverted index of skills, updated one skill at a time.
#[derive(Clone, Debug, Default)]
pub struct SkillIndex {
    terms: FxHashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    /// By document number; `None` once removed.
    docs: Vec<Option<Doc>>,
    by_id: BTreeMap<SkillId, u32>,
    len_sums: [u64; FIELDS],
    /// Only these terms get postings (a one-shot search that knows its
    /// query); every document's lengths are still counted, so scores are
    /// those of the whole index.
    only: Option<FxHashSet<Box<str>>>,
    /// Documents counted in `len_sums` and in [`SkillIndex::len`] but not
    /// held: an index read back for one query holds only the documents
    /// its terms name (see [`SkillIndex::from_touched`]).
    absent: usize,
}

impl SkillIndex {
    /// An empty index.
    pub fn new() -> Self {
        SkillIndex::default()
    }

    /// An empty index that keeps postings only for the terms of `query`:
    /// built over a registry, it answers that query exactly as a whole
    /// index would, in a fraction of the memory.
    pub fn for_query(query: &str) -> Self {
        let mut normalizer = Normalizer::new();
        let mut only = FxHashSet::default();
        for_each_term(query, &mut normalizer, &mut |term| {
            only.insert(term.into());
        });
        SkillIndex {
            only: Some(only),
            ..SkillIndex::default()
        }
    }

    /// How many skills are indexed.
    pub fn len(&self) -> usize {
        self.by_id.len() + self.absent
    }

    /// Whether no skill is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `id` is indexed.
    pub fn contains(&self, id: &SkillId) -> bool {
        self.by_id.contains_key(id)
    }

    /// The ids indexed, in order.
    pub fn ids(&self) -> impl Iterator<Item = &SkillId> {
        self.by_id.keys()
    }

    /// Indexes one skill under `id`, replacing what was indexed under it.
    pub fn insert(&mut self, id: SkillId, text: &SkillText, normalizer: &mut Normalizer) {
        let mut counts = FxHashMap::default();
        self.insert_coded(
            id,
            text,
            &mut counts,
            &mut |index, word| match normalizer.term(word) {
                Some(term) => index.code_of(term),
                None => STOP_WORD,
            },
        );
    }

    /// [`SkillIndex::insert`] for a worker that indexes many skills, into
    /// one index after another, with one normalizer: `codes` remembers what
    /// each word the normalizer has numbered is in this index, so a word
    /// seen before costs one hash of the word (not a second of its term).
    /// `codes` is moved to this index ([`WordCodes::next_index`]) before
    /// its first skill.
    pub(crate) fn insert_remembering(
        &mut self,
        id: SkillId,
        text: &SkillText,
        normalizer: &mut Normalizer,
        codes: &mut WordCodes,
    ) {
        let WordCodes {
            index: this,
            forgotten,
            codes,
            counts,
        } = codes;
        self.insert_coded(id, text, counts, &mut |index, word| {
            let (number, now_forgotten) = normalizer.number(word);
            if now_forgotten != *forgotten {
                // The normalizer numbers its words afresh.
                codes.clear();
                *forgotten = now_forgotten;
            }
            let at = number as usize;
            if let Some(&(of, code)) = codes.get(at)
                && of == *this
            {
                return code;
            }
            let code = match normalizer.term_of(number) {
                Some(term) => index.code_of(term),
                None => STOP_WORD,
            };
            if codes.len() <= at {
                codes.resize(at + 1, (0, 0));
            }
            if let Some(slot) = codes.get_mut(at) {
                *slot = (*this, code);
            }
            code
        });
    }

    /// The code of `term` in this index: its number (a new one if it is
    /// new), or [`NOT_KEPT`] when this index keeps no postings for it.
    fn code_of(&mut self, term: &str) -> u32 {
        if let Some(only) = &self.only
            && !only.contains(term)
        {
            return NOT_KEPT;
        }
        if let Some(&number) = self.terms.get(term) {
            return number;
        }
        let next = self.postings.len() as u32;
        if next >= NOT_KEPT {
            // Four billion terms do not fit in memory anyway; past them a
            // term is counted but not kept, rather than mistaken for one.
            return NOT_KEPT;
        }
        self.terms.insert(term.into(), next);
        self.postings.push(Vec::new());
        next
    }

    /// [`SkillIndex::insert`] with each word's code given by `code` and
    /// the per-term counts kept in `counts` (empty; left empty, with its
    /// capacity, for the next skill).
    fn insert_coded(
        &mut self,
        id: SkillId,
        text: &SkillText,
        counts: &mut FxHashMap<u32, [u32; FIELDS]>,
        code: &mut dyn FnMut(&mut SkillIndex, &str) -> u32,
    ) {
        self.remove(&id);
        let mut lens = [0u32; FIELDS];
        for field in SearchField::ALL {
            let at = field.index();
            let mut len = 0u32;
            for_each_word(&text.fields[at], &mut |word| {
                let number = code(self, word);
                if number == STOP_WORD {
                    return;
                }
                len = len.saturating_add(1);
                if number != NOT_KEPT {
                    let slot = counts.entry(number).or_insert([0; FIELDS]);
                    slot[at] = slot[at].saturating_add(1);
                }
            });
            lens[at] = len;
        }
        let doc = self.docs.len() as u32;
        for (term, tf) in counts.drain() {
            let small = [0, 1, 2, 3].map(|f| u8::try_from(tf[f]).unwrap_or(u8::MAX));
            let body = u16::try_from(tf[SearchField::Body.index()]).unwrap_or(u16::MAX);
            if let Some(list) = self.postings.get_mut(term as usize) {
                // Document numbers only grow, so each list stays sorted.
                list.push(Posting { doc, body, small });
            }
        }
        for (sum, len) in self.len_sums.iter_mut().zip(lens) {
            *sum += u64::from(len);
        }
        self.docs.push(Some(Doc {
            id: id.clone(),
            lens,
        }));
        self.by_id.insert(id, doc);
    }

    /// Adds every skill of `other` after this index's own, as if each had
    /// been inserted here in `other`'s order (an id already here is
    /// replaced). How parallel builds join their parts.
    pub fn append(&mut self, other: SkillIndex) {
        let replaced: Vec<SkillId> = other
            .by_id
            .keys()
            .filter(|id| self.by_id.contains_key(*id))
            .cloned()
            .collect();
        for id in &replaced {
            self.remove(id);
        }
        let offset = self.docs.len() as u32;
        let mut postings = other.postings;
        for (term, number) in other.terms {
            let list = postings
                .get_mut(number as usize)
                .map(std::mem::take)
                .unwrap_or_default();
            let next = self.postings.len() as u32;
            let mine = *self.terms.entry(term).or_insert(next);
            if mine == next {
                self.postings.push(Vec::new());
            }
            if let Some(target) = self.postings.get_mut(mine as usize) {
                target.extend(list.into_iter().map(|p| Posting {
                    doc: p.doc + offset,
                    ..p
                }));
            }
        }
        for (sum, add) in self.len_sums.iter_mut().zip(other.len_sums) {
            *sum += add;
        }
        self.absent += other.absent;
        for (id, doc) in other.by_id {
            self.by_id.insert(id, doc + offset);
        }
        self.docs.extend(other.docs);
    }

    /// Removes the skill indexed under `id`, if any.
    pub fn remove(&mut self, id: &SkillId) {
        let Some(doc) = self.by_id.remove(id) else {
            return;
        };
        if let Some(Some(removed)) = self.docs.get_mut(doc as usize).map(Option::take) {
            for (sum, len) in self.len_sums.iter_mut().zip(removed.lens) {
                *sum -= u64::from(len);
            }
        }
        for list in &mut self.postings {
            if let Ok(at) = list.binary_search_by_key(&doc, |p| p.doc) {
                list.remove(at);
            }
        }
    }

    /// The skills that best fit `query`, best first, at most `limit`; only
    /// skills that match at least one query term.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.search_where(query, limit, &|_| true)
    }

    /// [`SkillIndex::search`] among the skills `keep` accepts (the
    /// model-visible ones, say): `limit` of those, not of all.
    pub fn search_where(
        &self,
        query: &str,
        limit: usize,
        keep: &dyn Fn(&SkillId) -> bool,
    ) -> Vec<SearchHit> {
        let live = self.len();
        if live == 0 || limit == 0 {
            return Vec::new();
        }
        let terms = self.query_terms(query);
        let avg = self.len_sums.map(|sum| (sum as f32 / live as f32).max(1.0));
        let mut scores: Vec<f32> = vec![0.0; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut total_weight = 0.0f32;
        for term in &terms {
            total_weight += term.weight;
            let list = self.list(term.number);
            let idf = field_idf(list, live);
            for posting in list {
                let Some(Some(doc)) = self.docs.get(posting.doc as usize) else {
                    continue;
                };
                let Some(score) = scores.get_mut(posting.doc as usize) else {
                    continue;
                };
                if *score == 0.0 {
                    touched.push(posting.doc);
                }
                *score += term.boost * field_sum(posting, doc, &avg, &idf);
            }
        }
        let mut ranked: Vec<(f32, &SkillId, u32)> = touched
            .into_iter()
            .filter_map(|doc| {
                let id = &self.docs.get(doc as usize)?.as_ref()?.id;
                Some((*scores.get(doc as usize)?, id, doc))
            })
            .filter(|(score, id, _)| *score > 0.0 && keep(id))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        ranked.truncate(limit);
        ranked
            .into_iter()
            .map(|(score, id, doc)| {
                let mut matched = Vec::new();
                let mut weight = 0.0f32;
                for term in &terms {
                    let list = self.list(term.number);
                    let Some(posting) = list
                        .binary_search_by_key(&doc, |p| p.doc)
                        .ok()
                        .and_then(|at| list.get(at))
                    else {
                        continue;
                    };
                    weight += term.weight;
                    matched.push(MatchedTerm {
                        term: term.written.clone(),
                        fields: SearchField::ALL
                            .into_iter()
                            .filter(|f| posting.tf(f.index()) > 0)
                            .collect(),
                    });
                }
                SearchHit {
                    id: id.clone(),
                    score,
                    coverage: if total_weight > 0.0 {
                        (weight / total_weight).min(1.0)
                    } else {
                        0.0
                    },
                    matched,
                }
            })
            .collect()
    }

    /// The query's terms this index knows, each as the query first wrote
    /// it (as [`MatchedTerm::term`] names it) with its weight, in the
    /// query's order: what [`SearchHit::coverage`] is a share of. A caller
    /// that weighs fields apart (a suggestion that must match in a name,
    /// a description or keywords) takes its own share of these.
    pub fn query_weights(&self, query: &str) -> Vec<(String, f32)> {
        self.query_terms(query)
            .into_iter()
            .map(|term| (term.written, term.weight))
            .collect()
    }

    /// The live skills in document order, each with its field lengths:
    /// what `search::persist` writes, with [`SkillIndex::term_postings`].
    pub(crate) fn doc_entries(&self) -> impl Iterator<Item = (u32, &SkillId, [u32; FIELDS])> {
        self.docs.iter().enumerate().filter_map(|(doc, entry)| {
            Some((doc as u32, &entry.as_ref()?.id, entry.as_ref()?.lens))
        })
    }

    /// Every term with postings (in no particular order).
    pub(crate) fn term_list(&self) -> impl Iterator<Item = &str> {
        self.terms
            .iter()
            .filter(|(_, number)| self.list(**number).iter().next().is_some())
            .map(|(term, _)| &**term)
    }

    /// The postings of `term`, each as its document number and its counts
    /// by field (as kept: saturated as [`Posting`] saturates).
    pub(crate) fn postings_of(
        &self,
        term: &str,
    ) -> impl Iterator<Item = (u32, [u32; FIELDS])> + '_ {
        let list = self.terms.get(term).map_or(&[][..], |n| self.list(*n));
        list.iter()
            .map(|p| (p.doc, std::array::from_fn(|field| p.tf(field))))
    }

    /// An index of `docs`, numbered in order, without postings yet (see
    /// [`SkillIndex::push_term`]): how `search::persist` reads one back.
    pub(crate) fn from_docs(docs: Vec<(SkillId, [u32; FIELDS])>) -> SkillIndex {
        let mut index = SkillIndex::new();
        for (id, lens) in docs {
            if index.by_id.contains_key(&id) {
                // A second entry for an id would count its lengths twice.
                index.docs.push(None);
                continue;
            }
            for (sum, len) in index.len_sums.iter_mut().zip(lens) {
                *sum += u64::from(len);
            }
            index.by_id.insert(id.clone(), index.docs.len() as u32);
            index.docs.push(Some(Doc { id, lens }));
        }
        index
    }

    /// An index of the `touched` documents, numbered in order, without
    /// postings yet, that counts `absent` more documents whose field
    /// lengths add up to `absent_lens`: how `search::persist` reads back
    /// one query's index without the documents none of its terms names
    /// (they would score nothing, but their number and lengths weigh in
    /// every score). Only skills not counted here may be appended to it.
    pub(crate) fn from_touched(
        touched: Vec<(SkillId, [u32; FIELDS])>,
        absent: usize,
        absent_lens: [u64; FIELDS],
    ) -> SkillIndex {
        let mut index = SkillIndex::from_docs(touched);
        index.absent = absent;
        for (sum, len) in index.len_sums.iter_mut().zip(absent_lens) {
            *sum += len;
        }
        index
    }

    /// Adds the postings of a term not seen before, each a document
    /// number of this index, in increasing order, with its counts by
    /// field. A posting that breaks those rules is left out (the reader
    /// has already refused a file that had one), and so is a term seen
    /// before.
    pub(crate) fn push_term(
        &mut self,
        term: Box<str>,
        list: impl Iterator<Item = (u32, [u32; FIELDS])>,
    ) {
        if self.terms.contains_key(&term) {
            return;
        }
        let mut postings: Vec<Posting> = Vec::new();
        for (doc, tf) in list {
            let live = matches!(self.docs.get(doc as usize), Some(Some(_)));
            let ordered = postings.last().is_none_or(|last| last.doc < doc);
            if !live || !ordered {
                continue;
            }
            let small = [0, 1, 2, 3].map(|f| u8::try_from(tf[f]).unwrap_or(u8::MAX));
            let body = u16::try_from(tf[SearchField::Body.index()]).unwrap_or(u16::MAX);
            postings.push(Posting { doc, body, small });
        }
        if postings.is_empty() {
            return;
        }
        postings.shrink_to_fit();
        self.terms.insert(term, self.postings.len() as u32);
        self.postings.push(postings);
    }

    fn list(&self, term: u32) -> &[Posting] {
        self.postings.get(term as usize).map_or(&[], Vec::as_slice)
    }

    /// The query's distinct terms the index knows, in the order first
    /// written, each with its weight (inverse document frequency, raised
    /// a little for a term the query repeats); at most
    /// [`MAX_QUERY_TERMS`], those that weigh most.
    fn query_terms(&self, query: &str) -> Vec<QueryTerm> {
        let mut normalizer = Normalizer::new();
        let mut found: Vec<QueryTerm> = Vec::new();
        let mut slot: FxHashMap<u32, usize> = FxHashMap::default();
        let live = self.len() as f32;
        crate::search::analyze::for_each_word(query, &mut |word| {
            let Some(term) = normalizer.term(word) else {
                return;
            };
            let Some(&number) = self.terms.get(term) else {
                return;
            };
            match slot.get(&number) {
                Some(&at) => {
                    if let Some(seen) = found.get_mut(at) {
                        seen.count += 1;
                    }
                }
                None => {
                    let df = self.list(number).len() as f32;
                    if df == 0.0 {
                        return;
                    }
                    slot.insert(number, found.len());
                    found.push(QueryTerm {
                        number,
                        written: word.to_owned(),
                        idf: (1.0 + (live - df + 0.5) / (df + 0.5)).ln(),
                        count: 1,
                        boost: 1.0,
                        weight: 0.0,
                        order: found.len(),
                    });
                }
            }
        });
        for term in &mut found {
            term.boost = 1.0 + (term.count as f32).ln();
            term.weight = term.idf * term.boost;
        }
        if found.len() > MAX_QUERY_TERMS {
            found.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.order.cmp(&b.order)));
            found.truncate(MAX_QUERY_TERMS);
            found.sort_by_key(|t| t.order);
        }
        found
    }
}

/// A word's code for a stop word: not counted at all.
const STOP_WORD: u32 = u32::MAX;

/// A word's code for a term that counts towards its field's length but
/// gets no postings (an index for one query keeps only that query's).
const NOT_KEPT: u32 = u32::MAX - 1;

/// What each word a [`Normalizer`] has numbered is in one index (a stop
/// word, or a term and its number), for
/// [`SkillIndex::insert_remembering`]; one per worker, moved from index to
/// index without clearing.
#[derive(Debug)]
pub(crate) struct WordCodes {
    /// The index the codes are of: an entry marked with another is unset.
    index: u32,
    /// The normalizer's count of forgettings the word numbers are of.
    forgotten: u64,
    /// By word number: the index it was coded in, and its code there.
    codes: Vec<(u32, u32)>,
    /// One skill's counts by term, kept for their capacity.
    counts: FxHashMap<u32, [u32; FIELDS]>,
}

impl WordCodes {
    /// Codes of a first index.
    pub(crate) fn new() -> Self {
        WordCodes {
            index: 1,
            forgotten: 0,
            codes: Vec::new(),
            counts: FxHashMap::default(),
        }
    }

    /// From now on, codes of another index: everything remembered before
    /// is unset (index 0 marks the slots never set, so no index is 0).
    pub(crate) fn next_index(&mut self) {
        self.index = self.index.wrapping_add(1);
        if self.index == 0 {
            self.codes.clear();
            self.index = 1;
        }
    }
}

/// Indexes skills into one index, remembering what each distinct word is
/// in it (a stop word, or a term and its number), so a word seen before
/// costs one hash of the word: no stemming again, no lookup of its term.
/// The index's term numbers never change while it is borrowed here, which
/// is what makes the remembered numbers right.
pub(crate) struct IndexBuilder<'a> {
    index: &'a mut SkillIndex,
    normalizer: Normalizer,
    words: FxHashMap<Box<str>, u32>,
    /// Words remembered at most ([`MAX_REMEMBERED`]; tests lower it).
    max_words: usize,
    counts: FxHashMap<u32, [u32; FIELDS]>,
}

impl<'a> IndexBuilder<'a> {
    /// A builder adding to `index`.
    pub(crate) fn new(index: &'a mut SkillIndex) -> Self {
        IndexBuilder {
            index,
            normalizer: Normalizer::new(),
            words: FxHashMap::default(),
            max_words: MAX_REMEMBERED,
            counts: FxHashMap::default(),
        }
    }

    /// [`SkillIndex::insert`]: indexes one skill under `id`, replacing
    /// what was indexed under it.
    pub(crate) fn insert(&mut self, id: SkillId, text: &SkillText) {
        let IndexBuilder {
            index,
            normalizer,
            words,
            max_words,
            counts,
        } = self;
        index.insert_coded(id, text, counts, &mut |index, word| {
            if let Some(&code) = words.get(word) {
                return code;
            }
            let code = match normalizer.compute(word) {
                Some(term) => index.code_of(&term),
                None => STOP_WORD,
            };
            // A hostile tree of millions of distinct words: forget and
            // start again, so memory stays bounded.
            if words.len() >= *max_words {
                words.clear();
            }
            words.insert(word.into(), code);
            code
        });
    }

    /// The index added to, for what a builder does not do.
    pub(crate) fn index(&mut self) -> &mut SkillIndex {
        self.index
    }
}

impl std::fmt::Debug for IndexBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexBuilder")
            .field("skills", &self.index.len())
            .field("words", &self.words.len())
            .finish()
    }
}

struct QueryTerm {
    number: u32,
    written: String,
    /// Over the whole skill: what the query's weight (coverage, the
    /// term cap) is made of.
    idf: f32,
    count: u32,
    /// A term the query repeats counts a little more: `1 + ln(count)`.
    boost: f32,
    weight: f32,
    order: usize,
}

/// A term's inverse document frequency in each field, from its postings
/// (every live skill that has it): rare in names, a name match says much.
fn field_idf(list: &[Posting], live: usize) -> [f32; FIELDS] {
    let mut df = [0u32; FIELDS];
    for posting in list {
        for (field, count) in df.iter_mut().enumerate() {
            *count += u32::from(posting.tf(field) > 0);
        }
    }
    let live = live as f32;
    df.map(|df| {
        let df = df as f32;
        (1.0 + (live - df + 0.5) / (df + 0.5)).ln()
    })
}

/// One posting's score for its term: each field that has the term, its
/// count saturated against the field's normalised length, times the
/// term's IDF in that field and the field's weight, summed.
fn field_sum(posting: &Posting, doc: &Doc, avg: &[f32; FIELDS], idf: &[f32; FIELDS]) -> f32 {
    let mut sum = 0.0f32;
    for field in 0..FIELDS {
        let tf = posting.tf(field);
        if tf == 0 {
            continue;
        }
        let b = NORMALISATION[field];
        let norm = 1.0 - b + b * doc.lens[field] as f32 / avg[field];
        let tf = tf as f32;
        sum += WEIGHTS[field] * idf[field] * tf * (K1 + 1.0) / (tf + K1 * norm);
    }
    sum
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A skill's text: name, description, keywords, files, body.
    fn text(fields: [&str; FIELDS]) -> SkillText {
        SkillText {
            fields: fields.map(str::to_owned),
        }
    }

    fn id(name: &str) -> SkillId {
        SkillId::parse(name).unwrap()
    }

    fn index_of(skills: &[(&str, [&str; FIELDS])]) -> SkillIndex {
        let mut index = SkillIndex::new();
        let mut normalizer = Normalizer::new();
        for (name, fields) in skills {
            index.insert(id(name), &text(*fields), &mut normalizer);
        }
        index
    }

    fn ranked(index: &SkillIndex, query: &str) -> Vec<String> {
        index
            .search(query, 10)
            .into_iter()
            .map(|hit| hit.id.to_string())
            .collect()
    }

    /// Three skills that each mention stories; one is named for them.
    fn stories() -> Vec<(&'static str, [&'static str; FIELDS])> {
        vec![
            (
                "storybook",
                [
                    "storybook",
                    "Component stories and visual docs",
                    "",
                    "",
                    "Write CSF3 stories.",
                ],
            ),
            (
                "react-testing",
                [
                    "react-testing",
                    "Unit tests for React components",
                    "",
                    "",
                    "Render components, assert on the DOM. Storybook stories can be reused as test fixtures.",
                ],
            ),
            (
                "changelog",
                [
                    "changelog",
                    "Keep a changelog",
                    "",
                    "",
                    "Every user story of a release gets a line.",
                ],
            ),
        ]
    }

    #[test]
    fn a_skill_named_for_the_task_comes_before_one_that_mentions_it() {
        let index = index_of(&stories());
        // `storybook` is in the first skill's name and the second's body
        // only; `stories` (stem `stori`) in both bodies and the first's
        // description, and `story` in the third's body.
        assert_eq!(
            ranked(&index, "write storybook stories"),
            ["storybook", "react-testing", "changelog"]
        );
        let hits = index.search("write storybook stories", 1);
        assert_eq!(
            hits[0].matched,
            [
                MatchedTerm {
                    term: "write".into(),
                    fields: vec![SearchField::Body]
                },
                MatchedTerm {
                    term: "storybook".into(),
                    fields: vec![SearchField::Name]
                },
                MatchedTerm {
                    term: "stories".into(),
                    fields: vec![SearchField::Description, SearchField::Body]
                },
            ]
        );
    }

    #[test]
    fn a_word_counts_by_how_rare_it_is_in_the_field_that_has_it() {
        // `deploy` is in nine bodies (one repeats it four times) and in
        // one description. Rare in descriptions, it says much there; common
        // in bodies, little, however often one body repeats it.
        let mut skills = vec![
            (
                "ship",
                ["ship", "Deploy the app", "", "", "Run the release script."],
            ),
            (
                "ops-notes",
                ["ops-notes", "Notes", "", "", "deploy deploy deploy deploy"],
            ),
        ];
        let names = ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"];
        for name in names {
            skills.push((name, [name, "Other work", "", "", "We deploy on Fridays."]));
        }
        let index = index_of(&skills);
        let hits = index.search("deploy", 3);
        assert_eq!(hits[0].id.as_str(), "ship");
        assert_eq!(hits[1].id.as_str(), "ops-notes");
        // The description match weighs more than twice the body's.
        assert!(hits[0].score > 2.0 * hits[1].score, "{hits:?}");
    }

    #[test]
    fn file_names_and_extensions_route_a_task() {
        let index = index_of(&[
            (
                "mesh-tools",
                [
                    "mesh-tools",
                    "Inspect 3D meshes",
                    "",
                    "scripts/repair_mesh.py\nscripts/slice.stl.py",
                    "",
                ],
            ),
            (
                "slides",
                ["slides", "Build decks", "pptx", "templates/base.pptx", ""],
            ),
            (
                "notes",
                [
                    "notes",
                    "Meeting notes",
                    "",
                    "",
                    "No meshes here, only text.",
                ],
            ),
        ]);
        assert_eq!(ranked(&index, "fix this broken part.stl"), ["mesh-tools"]);
        assert_eq!(ranked(&index, "make deck.pptx"), ["slides"]);
        // `repair_mesh` is split: `repair` alone finds it.
        assert_eq!(ranked(&index, "repair"), ["mesh-tools"]);
    }

    #[test]
    fn nothing_matches_nothing() {
        let index = index_of(&stories());
        assert!(index.search("kubernetes", 10).is_empty());
        assert!(index.search("the of and", 10).is_empty());
        assert!(index.search("storybook", 0).is_empty());
        assert!(SkillIndex::new().search("storybook", 10).is_empty());
    }

    #[test]
    fn ties_go_to_the_smaller_id() {
        let same = ["x", "Parse YAML files", "", "", ""];
        let index = index_of(&[("b-yaml", same), ("a-yaml", same), ("c-yaml", same)]);
        assert_eq!(ranked(&index, "yaml"), ["a-yaml", "b-yaml", "c-yaml"]);
    }

    #[test]
    fn an_index_updated_skill_by_skill_answers_as_one_built_at_once() {
        let all = stories();
        let whole = index_of(&all);
        // Built in another order, with a skill first indexed with other
        // text and then replaced, and one removed and put back.
        let mut updated = SkillIndex::new();
        let mut normalizer = Normalizer::new();
        updated.insert(
            id("changelog"),
            &text(["x", "kubernetes storybook", "", "", ""]),
            &mut normalizer,
        );
        for (name, fields) in all.iter().rev() {
            updated.insert(id(name), &text(*fields), &mut normalizer);
        }
        updated.remove(&id("storybook"));
        updated.insert(id("storybook"), &text(all[0].1), &mut normalizer);
        for query in [
            "write storybook stories",
            "components",
            "kubernetes",
            "react test",
        ] {
            assert_eq!(
                updated.search(query, 10),
                whole.search(query, 10),
                "{query}"
            );
        }
        assert_eq!(updated.len(), 3);
    }

    #[test]
    fn parts_appended_answer_as_one_index() {
        let all = stories();
        let whole = index_of(&all);
        let mut first = index_of(&all[..1]);
        first.append(index_of(&all[1..]));
        for query in ["write storybook stories", "components release"] {
            assert_eq!(first.search(query, 10), whole.search(query, 10), "{query}");
        }
    }

    #[test]
    fn a_builder_answers_as_skill_by_skill_inserts() {
        let all = stories();
        let whole = index_of(&all);
        let queries = [
            "write storybook stories",
            "components release",
            "the DOM of a React component",
        ];
        // Remembering every word, and remembering at most three (so what
        // it remembered is forgotten again and again).
        for max_words in [MAX_REMEMBERED, 3] {
            let mut built = SkillIndex::new();
            let mut builder = IndexBuilder::new(&mut built);
            builder.max_words = max_words;
            // A skill first indexed with other text, then replaced.
            builder.insert(id("changelog"), &text(["x", "kubernetes", "", "", ""]));
            for (name, fields) in &all {
                builder.insert(id(name), &text(*fields));
            }
            for query in queries {
                assert_eq!(built.search(query, 10), whole.search(query, 10), "{query}");
            }
            // An index for one query, built the same way.
            let mut only = SkillIndex::for_query(queries[0]);
            let mut builder = IndexBuilder::new(&mut only);
            builder.max_words = max_words;
            for (name, fields) in &all {
                builder.insert(id(name), &text(*fields));
            }
            assert_eq!(only.search(queries[0], 10), whole.search(queries[0], 10));
        }
    }

    #[test]
    fn indexes_built_one_after_another_with_remembered_codes_answer_as_one() {
        // The same words again in later indexes, under other names.
        let again = ["storybook-again", "react-testing-again", "changelog-again"];
        let mut all = stories();
        all.extend(
            stories()
                .into_iter()
                .zip(again)
                .map(|((_, f), name)| (name, f)),
        );
        let whole = index_of(&all);
        // Every word of every skill, a skill's words at a time.
        let queries: Vec<String> = all.iter().map(|(_, fields)| fields.join(" ")).collect();
        // Remembering every word, and at most three (so the normalizer
        // numbers its words afresh again and again).
        for max_words in [MAX_REMEMBERED, 3] {
            let mut normalizer = Normalizer::remembering_at_most(max_words);
            let mut codes = WordCodes::new();
            let mut joined = SkillIndex::new();
            // Two skills to an index, as workers index batches; the same
            // words get other codes in each.
            for pair in all.chunks(2) {
                codes.next_index();
                let mut part = SkillIndex::new();
                for (name, fields) in pair {
                    part.insert_remembering(id(name), &text(*fields), &mut normalizer, &mut codes);
                }
                joined.append(part);
            }
            for query in &queries {
                assert_eq!(joined.search(query, 10), whole.search(query, 10), "{query}");
            }
        }
    }

    #[test]
    fn an_index_for_one_query_answers_it_as_the_whole_index() {
        let all = stories();
        let whole = index_of(&all);
        let query = "reuse storybook stories as React fixtures";
        let mut only = SkillIndex::for_query(query);
        let mut normalizer = Normalizer::new();
        for (name, fields) in &all {
            only.insert(id(name), &text(*fields), &mut normalizer);
        }
        assert_eq!(only.search(query, 10), whole.search(query, 10));
        assert!(only.terms.len() < whole.terms.len());
    }

    #[test]
    fn a_long_query_keeps_its_weightiest_terms() {
        let index = index_of(&stories());
        // Thousands of distinct words the index does not know, and the
        // one it does, far down.
        let mut query: String = (0..50_000).map(|i| format!("w{i} ")).collect();
        query.push_str("storybook");
        assert_eq!(ranked(&index, &query)[0], "storybook");
        // More known terms than the cap: still answered, from the cap's worth.
        let mut big = SkillIndex::new();
        let mut normalizer = Normalizer::new();
        let words: Vec<String> = (0..MAX_QUERY_TERMS * 2).map(|i| format!("t{i}")).collect();
        big.insert(
            id("many"),
            &text(["many", "", "", "", &words.join(" ")]),
            &mut normalizer,
        );
        assert_eq!(big.query_terms(&words.join(" ")).len(), MAX_QUERY_TERMS);
    }

    /// What `search::persist` builds for one query: only the documents the
    /// query's terms name, renumbered, the others counted. It answers as
    /// the whole index, to the bit, and a skill appended after it is
    /// ranked as if it had been inserted in the whole index.
    #[test]
    fn an_index_of_the_touched_documents_answers_as_the_whole_index() {
        let mut all = stories();
        all.push(("pdf", ["pdf", "Fill PDF forms", "", "", "forms and fields"]));
        all.push((
            "docx",
            ["docx", "Word documents", "", "", "long body text here"],
        ));
        let whole = index_of(&all);
        let query = "storybook stories for docs";
        let named: std::collections::BTreeSet<u32> = whole
            .query_terms(query)
            .iter()
            .flat_map(|t| whole.list(t.number).iter().map(|p| p.doc))
            .collect();
        let named: Vec<u32> = named.into_iter().collect();
        let mut absent_lens = whole.len_sums;
        let mut touched = Vec::new();
        for (doc, id, lens) in whole.doc_entries() {
            if named.contains(&doc) {
                touched.push((id.clone(), lens));
                for (sum, len) in absent_lens.iter_mut().zip(lens) {
                    *sum -= u64::from(len);
                }
            }
        }
        assert!(touched.len() < whole.len(), "some documents are left out");
        let absent = whole.len() - touched.len();
        let mut part = SkillIndex::from_touched(touched, absent, absent_lens);
        for term in whole.term_list() {
            part.push_term(
                term.into(),
                whole
                    .postings_of(term)
                    .filter_map(|(doc, tf)| Some((named.binary_search(&doc).ok()? as u32, tf))),
            );
        }
        assert_eq!(part.len(), whole.len());
        let bits = |hits: Vec<SearchHit>| -> Vec<(String, u32)> {
            hits.into_iter()
                .map(|h| (h.id.to_string(), h.score.to_bits()))
                .collect()
        };
        assert_eq!(bits(part.search(query, 10)), bits(whole.search(query, 10)));
        assert_eq!(part.search(query, 10), whole.search(query, 10));
        let late = (
            "docs-site",
            ["docs-site", "Stories for docs", "", "", "docs"],
        );
        let mut normalizer = Normalizer::new();
        part.insert(id(late.0), &text(late.1), &mut normalizer);
        all.push(late);
        let whole = index_of(&all);
        assert_eq!(bits(part.search(query, 10)), bits(whole.search(query, 10)));
    }
}
