//! The nodes of a profile's report, by path: shared by the `integration` and `profile` test
//! binaries (a module of each).

/// The node at `path` (names from the root down) of a profile: its index and report.
pub(crate) fn node<'r>(
    r: &'r mpit_prof::Report,
    path: &[&str],
) -> (usize, &'r mpit_prof::NodeReport) {
    let mut at = 0;
    assert_eq!(r.nodes[0].name, path[0]);
    for name in &path[1..] {
        at = r
            .nodes
            .iter()
            .position(|n| n.parent == Some(at) && n.name == *name)
            .unwrap_or_else(|| panic!("no node {name} under {}", r.nodes[at].name));
    }
    (at, &r.nodes[at])
}
