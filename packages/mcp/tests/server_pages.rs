//! `skills/list` pages as the server makes them: a page made ahead (while
//! the client reads the one before) is exactly the page made on request,
//! and never one of a registry that was swapped out since.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness

use crate::common;

use std::path::Path;

use bcode_skill_mcp::{SKILLS_PAGE, SkillServer};
use serde_json::Value;

use common::registry;

fn write_skills(dir: &Path, count: usize, marked: usize, mark: &str) {
    for n in 0..count {
        let folder = dir.join(format!("s{n:03}"));
        std::fs::create_dir_all(&folder).unwrap();
        let description = if n == marked {
            format!("Skill {n} {mark}")
        } else {
            format!("Skill {n}")
        };
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\ndescription: {description}\n---\nBody {n}.\n"),
        )
        .unwrap();
    }
}

/// Every page from the first, as JSON.
fn all_pages(server: &SkillServer) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = server.list_skills_page(cursor.as_deref()).unwrap();
        cursor = page.next_cursor.clone();
        pages.push(serde_json::to_value(&page).unwrap());
        if cursor.is_none() {
            return pages;
        }
    }
}

#[test]
fn pages_made_ahead_are_the_pages_made_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    write_skills(tmp.path(), 2 * SKILLS_PAGE + 50, 0, "");
    let registry = registry(tmp.path());
    // In order (each page after the first was made ahead) and each page
    // asked of a fresh server (nothing made ahead) give the same bytes.
    let ahead = all_pages(&SkillServer::new(&registry));
    assert_eq!(ahead.len(), 3);
    for (n, page) in ahead.iter().enumerate() {
        let cursor = (n > 0).then(|| (n * SKILLS_PAGE).to_string());
        let fresh = SkillServer::new(&registry)
            .list_skills_page(cursor.as_deref())
            .unwrap();
        assert_eq!(page, &serde_json::to_value(&fresh).unwrap(), "page {n}");
    }
    let listed: usize = ahead
        .iter()
        .map(|p| p["skills"].as_array().unwrap().len())
        .sum();
    assert_eq!(listed, 2 * SKILLS_PAGE + 50);
}

#[test]
fn a_page_made_ahead_of_a_swapped_out_registry_is_not_served() {
    let tmp = tempfile::tempdir().unwrap();
    let marked = SKILLS_PAGE + 7;
    write_skills(tmp.path(), 2 * SKILLS_PAGE, marked, "before");
    let server = SkillServer::new(&registry(tmp.path()));
    let first = server.list_skills_page(None).unwrap();
    let cursor = first.next_cursor.unwrap();
    // The second page is being made ahead; the registry changes first.
    write_skills(tmp.path(), 2 * SKILLS_PAGE, marked, "after");
    assert!(server.replace(&registry(tmp.path())));
    let second = serde_json::to_value(server.list_skills_page(Some(&cursor)).unwrap()).unwrap();
    let description = second["skills"][7]["frontmatter"]["description"].clone();
    assert_eq!(description, format!("Skill {marked} after"));
}

#[test]
fn a_finished_page_made_ahead_is_answered_without_blocking_but_never_the_last() {
    let tmp = tempfile::tempdir().unwrap();
    write_skills(tmp.path(), 2 * SKILLS_PAGE + 50, 0, "");
    let registry = registry(tmp.path());
    let server = SkillServer::new(&registry);
    // Nothing is made ahead before a page is asked for.
    assert!(server.ready_skills_page(Some("100")).is_none());
    let cursor = server.list_skills_page(None).unwrap().next_cursor.unwrap();
    assert_eq!(cursor, "100");
    // The second page is being made; once made it is answered at once.
    let ready = (0..500)
        .find_map(|_| {
            let page = server.ready_skills_page(Some(&cursor));
            if page.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            page
        })
        .expect("the page made ahead is finished within five seconds");
    let fresh = SkillServer::new(&registry)
        .list_skills_page(Some(&cursor))
        .unwrap();
    assert_eq!(
        serde_json::to_value(&ready).unwrap(),
        serde_json::to_value(&fresh).unwrap()
    );
    // The third and last page writes the digest cache: never answered so.
    let last = ready.next_cursor.unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(server.ready_skills_page(Some(&last)).is_none());
    assert!(
        server
            .list_skills_page(Some(&last))
            .unwrap()
            .next_cursor
            .is_none()
    );
}
