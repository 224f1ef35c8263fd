//! docs/state-machine.md shows the transition table of `conn::state`; this
//! test fails when the two disagree.

use h1proto::conn::state::{TRANSITIONS, diagram_mermaid, table_markdown};

fn section<'a>(doc: &'a str, name: &str) -> &'a str {
    let start = format!("<!-- {name}:start -->\n");
    let end = format!("<!-- {name}:end -->");
    let from = doc.find(&start).unwrap_or_else(|| panic!("no {name} start marker")) + start.len();
    let to = doc[from..].find(&end).unwrap_or_else(|| panic!("no {name} end marker")) + from;
    &doc[from..to]
}

fn doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/state-machine.md")).unwrap()
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
