//! The arrows between the crate's files run one way: `model` imports only
//! `model`; `store` imports no `reaper`, `ui` or `console`; `ui` imports no
//! `store` or `console`; and no two files import each other, directly or
//! round a longer circle.
//!
//! How an arrow is read (a plain-text reading of `src/**/*.rs`, no
//! compiler):
//! - Each file is one node, named for its module (`src/store/read/scan.rs`
//!   is `store::read::scan`, `src/store/mod.rs` is `store`). `src/main.rs`
//!   (a crate of its own) and test-only files (`tests.rs`, `*_tests.rs`)
//!   are left out, and so is every `#[cfg(test)]` module inside a file:
//!   test code may reach anywhere.
//! - An arrow is a path in code (not in comments or strings) that starts
//!   with `crate::`, `super::` or `self::`, in a `use` (groups expanded) or
//!   inline. It points at the file of the longest module prefix of the
//!   path; when the next name is re-exported there (`pub use x::Name;`,
//!   `pub use x::{.., Name, ..}`), it is followed to the file that defines
//!   it. A `mod x;` declaration is not an arrow; a `pub use` is (of the
//!   module it re-exports from). An alias of the crate (`use crate as x`)
//!   would hide arrows from this reading, so it fails the test itself.
//!   themselves.
//! - A file and its own submodules (its descendants in the module tree)
//!   are one unit: arrows between them are not counted for circles (Rust's
//!   privacy runs down that tree; `jobs/mod.rs` and `jobs/outcome.rs` are one
//!   module split in two). Arrows between siblings, cousins and other
//!   folders are.
//! - The layer rules count every arrow out of the layer's folder.
//!
//! A failure names the file and the import. There are no exceptions.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One arrow: from a file to a file, with the import as written.
#[derive(Debug, Clone)]
struct Arrow {
    from: String,
    to: String,
    import: String,
    /// The top module the import names as written (`store` for
    /// `crate::store::X`, even when `X` is re-exported from `model`).
    named: String,
}

/// One source file as read.
struct File {
    /// The module path (`["store", "read"]`; the crate root is empty).
    module: Vec<String>,
    /// The code: comments, strings and `#[cfg(test)]` modules blanked.
    code: String,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// Blank comments, string and char literals (kept as spaces, so offsets
/// and lines stay).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'r' && (b[i..].starts_with(b"r#") || b[i..].starts_with(b"r\"")) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = text[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
                blank(&mut out, i, end);
                i = end;
            } else {
                i += 1;
            }
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\''), not a lifetime.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|n| i + 2 + n + 1)
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + width) == Some(&b'\'')).then_some(i + 2 + width)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Blank every `#[cfg(test)]` item that has a body (`mod tests { .. }`).
fn drop_test_modules(code: &str) -> String {
    let mut out = code.to_owned();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|n| from + n) {
        let Some(open) = out[at..].find(['{', ';']).map(|n| at + n) else {
            break;
        };
        if out.as_bytes()[open] == b';' {
            from = open + 1;
            continue;
        }
        let mut depth = 0;
        let mut end = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let blanked: String = out[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blanked);
        from = end;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expand a `use` tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str) -> Vec<String> {
    // `x as y` keeps `x`: the rename marked, then the spaces dropped.
    let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree: String = tree
        .replace(" as ", "~")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let Some(open) = tree.find('{') else {
        return vec![tree.split('~').next().unwrap_or(&tree).to_owned()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |q| format!("{prefix}{q}")))
        .collect()
}

/// Every `use` in `code`: (is a `pub use`, the paths, the text).
fn uses(code: &str) -> Vec<(bool, Vec<String>, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("use ").map(|n| from + n) {
        from = at + 4;
        let before = code[..at].trim_end();
        let starts = at == 0
            || before.ends_with(';')
            || before.ends_with('{')
            || before.ends_with('}')
            || before.ends_with(']')
            || before.ends_with("pub")
            || before.ends_with(')');
        if !starts || code[..at].ends_with(|c: char| is_ident(c)) {
            continue;
        }
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let Some(end) = code[at..].find(';').map(|n| at + n) else {
            break;
        };
        let text = code[at + 4..end].trim().to_owned();
        let paths = expand(&text)
            .into_iter()
            .map(|p| p.trim_end_matches("::self").to_owned())
            .collect();
        out.push((public, paths, text));
        from = end;
    }
    out
}

/// Inline paths starting with `crate::`, `super::` or `self::`.
fn inline_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(root).map(|n| from + n) {
            from = at + root.len();
            if code[..at].ends_with(|c: char| is_ident(c) || c == ':') {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(is_ident(c) || c == ':'))
                .map_or(code.len(), |n| at + n);
            out.push(code[at..end].trim_end_matches(':').to_owned());
        }
    }
    out
}

struct Crate {
    files: BTreeMap<String, File>,
    /// Module path -> file name.
    modules: BTreeMap<Vec<String>, String>,
}

impl Crate {
    fn read() -> Self {
        let root = src();
        let mut paths = Vec::new();
        rs_files(&root, &mut paths);
        let mut files = BTreeMap::new();
        let mut modules = BTreeMap::new();
        for path in paths {
            let relative = path.strip_prefix(&root).unwrap().to_owned();
            let stem = relative.file_stem().unwrap().to_string_lossy().into_owned();
            if relative == Path::new("main.rs") || stem == "tests" || stem.ends_with("_tests") {
                continue;
            }
            let name = relative.to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let module = module_of(&relative);
            modules.insert(module.clone(), name.clone());
            files.insert(
                name,
                File {
                    module,
                    code: drop_test_modules(&strip(&text)),
                },
            );
        }
        Self { files, modules }
    }

    /// `path` (as written in `module`) as absolute segments; `None` for a
    /// path into another crate.
    fn absolute(&self, module: &[String], path: &str) -> Option<Vec<String>> {
        let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
        let mut at: Vec<String> = match *segments.peek()? {
            "crate" => {
                segments.next();
                Vec::new()
            }
            "self" => {
                segments.next();
                module.to_vec()
            }
            "super" => module.to_vec(),
            first => {
                // A child module named without `self::`.
                let mut child = module.to_vec();
                child.push(first.to_owned());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                module.to_vec()
            }
        };
        for segment in segments {
            if segment == "super" {
                at.pop()?;
            } else {
                at.push(segment.to_owned());
            }
        }
        Some(at)
    }

    /// The file that defines what `absolute` names, following re-exports.
    fn target(&self, absolute: &[String], hops: usize) -> Option<String> {
        let known = (0..=absolute.len())
            .rev()
            .find(|&n| self.modules.contains_key(&absolute[..n]))?;
        let file = self.modules[&absolute[..known]].clone();
        if hops < 8
            && let Some(name) = absolute.get(known)
            && name != "*"
        {
            let module = &self.files[&file].module;
            for (public, paths, _) in uses(&self.files[&file].code) {
                if !public {
                    continue;
                }
                for path in paths {
                    let last = path.rsplit("::").next().unwrap_or_default();
                    if last == name
                        && let Some(next) = self.absolute(module, &path)
                        && next != absolute
                        && let Some(found) = self.target(&next, hops + 1)
                    {
                        return Some(found);
                    }
                }
            }
        }
        Some(file)
    }

    fn arrows(&self) -> Vec<Arrow> {
        let mut out = Vec::new();
        for (name, file) in &self.files {
            // A `pub use` is an import too: of the module it re-exports
            // from (a parent's re-export of its own children stays inside
            // its unit).
            let mut paths: Vec<String> = uses(&file.code)
                .into_iter()
                .flat_map(|(_, paths, _)| paths)
                .collect();
            paths.extend(inline_paths(&file.code));
            // A `use` is also read inline: each import once.
            let paths: BTreeSet<String> = paths.into_iter().collect();
            for path in paths {
                let Some(absolute) = self.absolute(&file.module, &path) else {
                    continue;
                };
                if let Some(to) = self.target(&absolute, 0)
                    && &to != name
                {
                    out.push(Arrow {
                        from: name.clone(),
                        to,
                        import: path,
                        named: absolute.first().cloned().unwrap_or_default(),
                    });
                }
            }
        }
        out
    }
}

/// Whether one module path is the other's ancestor (or the same).
fn same_line(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The circles of the file graph: each strongly connected set of two or
/// more files, as its files sorted and joined by ` <-> `, with the arrows
/// inside it.
fn circles(krate: &Crate, arrows: &[Arrow]) -> BTreeMap<String, Vec<Arrow>> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for arrow in arrows {
        let (a, b) = (
            &krate.files[&arrow.from].module,
            &krate.files[&arrow.to].module,
        );
        if !same_line(a, b) {
            graph.entry(&arrow.from).or_default().insert(&arrow.to);
        }
    }
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            for &next in graph.get(at).into_iter().flatten() {
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&k| (k, reach(k))).collect();
    let mut out = BTreeMap::new();
    for (&file, reached) in &reaches {
        let set: BTreeSet<&str> = reached
            .iter()
            .copied()
            .filter(|other| reaches.get(other).is_some_and(|r| r.contains(file)))
            .chain([file])
            .collect();
        if set.len() < 2 {
            continue;
        }
        let key = set.iter().copied().collect::<Vec<_>>().join(" <-> ");
        let inside: Vec<Arrow> = arrows
            .iter()
            .filter(|a| set.contains(a.from.as_str()) && set.contains(a.to.as_str()))
            .filter(|a| !same_line(&krate.files[&a.from].module, &krate.files[&a.to].module))
            .cloned()
            .collect();
        out.insert(key, inside);
    }
    out
}

/// The layer rule an arrow breaks, if any: by the file it reaches, or by
/// the module its import names (a re-export is still an import of the
/// module that re-exports).
fn broken_rule(arrow: &Arrow) -> Option<&'static str> {
    let top = |file: &str| file.split(['/', '.']).next().unwrap_or_default().to_owned();
    let from = top(&arrow.from);
    [top(&arrow.to), arrow.named.clone()]
        .into_iter()
        .find_map(|to| match from.as_str() {
            "model" if to != "model" && !to.is_empty() => Some("model imports only model"),
            "store" if ["reaper", "ui", "console"].contains(&to.as_str()) => {
                Some("store imports no reaper, ui or console")
            }
            "ui" if ["store", "console"].contains(&to.as_str()) => {
                Some("ui imports no store or console")
            }
            _ => None,
        })
}

fn said(arrows: &[Arrow]) -> String {
    arrows
        .iter()
        .map(|a| format!("  src/{} -> src/{} (`{}`)", a.from, a.to, a.import))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn layers_import_downwards_only() {
    let krate = Crate::read();
    let mut broken: Vec<(String, &'static str, Arrow)> = krate
        .arrows()
        .into_iter()
        .filter_map(|a| broken_rule(&a).map(|rule| (format!("{}: {}", a.from, a.import), rule, a)))
        .collect();
    broken.sort_by(|a, b| a.0.cmp(&b.0));
    let said_broken: Vec<String> = broken
        .iter()
        .map(|(_, rule, a)| format!("{rule}:\n{}", said(std::slice::from_ref(a))))
        .collect();
    assert!(
        said_broken.is_empty(),
        "arrows against the layers:\n{}",
        said_broken.join("\n")
    );
}

#[test]
fn no_alias_of_the_crate_hides_an_arrow() {
    let krate = Crate::read();
    let aliased: Vec<&String> = krate
        .files
        .iter()
        .filter(|(_, file)| {
            uses(&file.code).iter().any(|(_, paths, text)| {
                text.starts_with("crate as ")
                    || text.contains("self as ") && text.starts_with("crate::{")
                    || paths.iter().any(|p| p == "crate")
            })
        })
        .map(|(name, _)| name)
        .collect();
    assert!(aliased.is_empty(), "`use crate as ...` in {aliased:?}");
}

#[test]
fn no_file_level_import_circle() {
    let krate = Crate::read();
    let arrows = krate.arrows();
    let circles = circles(&krate, &arrows);
    let said_circles: Vec<String> = circles
        .iter()
        .map(|(key, inside)| format!("{key}:\n{}", said(inside)))
        .collect();
    assert!(
        said_circles.is_empty(),
        "import circles:\n{}",
        said_circles.join("\n")
    );
}

#[test]
fn the_reading_finds_an_arrow_through_a_re_export_and_skips_comments() {
    assert_eq!(
        expand("super::{a::B, c::{d, e as f}}"),
        ["super::a::B", "super::c::d", "super::c::e"]
    );
    let code = strip("let x = \"crate::ui::App\"; // crate::console::run\nuse crate::model::X;");
    assert_eq!(inline_paths(&code), ["crate::model::X"]);
    let krate = Crate::read();
    // `crate::reaper::JobRunner` is defined in reaper/jobs/mod.rs, re-exported
    // by reaper/mod.rs.
    let to = krate.target(&["reaper".to_owned(), "JobRunner".to_owned()], 0);
    assert_eq!(to.as_deref(), Some("reaper/jobs/mod.rs"));
}
