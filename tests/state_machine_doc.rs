//! docs/state-machine.md shows the transition table of `conn::state`; this
//! test fails when the two disagree.

use h1proto::conn::state::{TRANSITIONS, diagram_mermaid, table_markdown};

fn section<'a>(doc: &'a str, name: &str) -> &'a str {
    let start = format!("<!-- {name}:start -->\n");
    let end = format!("<!-- {name}:end -->");
    let from = doc
        .find(&start)
        .unwrap_or_else(|| panic!("no {name} start marker"))
        + start.len();
    let to = doc[from..]
        .find(&end)
        .unwrap_or_else(|| panic!("no {name} end marker"))
        + from;
    &doc[from..to]
}

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/state-machine.md");

/// The document; with `H1PROTO_BLESS_DOCS=1`, first rewritten from the code
/// (run that after changing the table, then review the diff).
fn doc() -> String {
    let text = std::fs::read_to_string(DOC).unwrap();
    if std::env::var_os("H1PROTO_BLESS_DOCS").is_none() {
        return text;
    }
    let table = section(&text, "table").to_owned();
    let diagram = section(&text, "diagram").to_owned();
    let text = text.replacen(&table, &table_markdown(), 1).replacen(
        &diagram,
        &format!("```mermaid\n{}```\n", diagram_mermaid()),
        1,
    );
    std::fs::write(DOC, &text).unwrap();
    text
}

#[test]
fn the_documented_table_is_the_code_table() {
    assert_eq!(section(&doc(), "table"), table_markdown());
}

#[test]
fn the_documented_diagram_is_the_code_table() {
    let doc = doc();
    let diagram = section(&doc, "diagram");
    let inner = diagram
        .strip_prefix("```mermaid\n")
        .and_then(|d| d.strip_suffix("```\n"))
        .expect("diagram is a mermaid block");
    assert_eq!(inner, diagram_mermaid());
}

#[test]
fn every_transition_has_one_row_in_the_doc() {
    let table = section(&doc(), "table").to_owned();
    for (from, input, to) in TRANSITIONS {
        let row = format!("| {from} | {input} | {to} |");
        assert_eq!(table.matches(&row).count(), 1, "{row}");
    }
}
