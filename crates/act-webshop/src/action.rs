//! The action grammar: `search[<keywords>]` and `click[<value>]`, parsed exactly as upstream's `parse_action`
//! (Python's `re.match(r'(.+)\[(.+)\]', action)`).

/// A parsed action: the name before the brackets and the argument inside, if the text has that shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedAction<'a> {
    /// The text before the bracket (the whole first line when there is no bracketed argument).
    pub name: &'a str,
    /// The text inside the brackets.
    pub arg: Option<&'a str>,
}

/// Parses `action` as upstream does: within the first line, the name runs to the last `[` that a later `]` closes
/// with at least one character between them, and the argument runs to the last `]`; text after it is ignored.
///
/// ```
/// use act_webshop::parse_action;
/// assert_eq!(parse_action("click[buy now]").arg, Some("buy now"));
/// assert_eq!(parse_action("search[red [large] shirt]").name, "search[red ");
/// assert_eq!(parse_action("look around").arg, None);
/// ```
pub fn parse_action(action: &str) -> ParsedAction<'_> {
    // Python's `.` does not match a newline, and re.match anchors only at the start.
    let line = action.split('\n').next().unwrap_or("");
    let Some(close) = line.rfind(']') else {
        return ParsedAction { name: action, arg: None };
    };
    // The rightmost `[` at byte >= 1 with at least one character before `close`.
    let open = line[..close].char_indices().rev().find(|&(i, c)| c == '[' && i >= 1 && i + 1 < close).map(|(i, _)| i);
    match open {
        Some(open) => ParsedAction { name: &line[..open], arg: Some(&line[open + 1..close]) },
        None => ParsedAction { name: action, arg: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_regex_semantics() {
        let p = parse_action("search[gluten free bars]");
        assert_eq!((p.name, p.arg), ("search", Some("gluten free bars")));
        // Trailing text after the last bracket is ignored by re.match.
        assert_eq!(parse_action("click[next >] please").arg, Some("next >"));
        // Empty argument: `(.+)` needs a character, so no match.
        assert_eq!(parse_action("click[]").arg, None);
        // A name is required.
        assert_eq!(parse_action("[x]").arg, None);
        // Only the first line counts.
        assert_eq!(parse_action("click[a]\nsearch[b]").arg, Some("a"));
        assert_eq!(parse_action("click\n[a]").arg, None);
        // Nested brackets: the argument keeps the inner closing bracket.
        assert_eq!(parse_action("click[a]]").arg, Some("a]"));
        let p = parse_action("x[y][z]");
        assert_eq!((p.name, p.arg), ("x[y]", Some("z")));
        // `[]` directly before the last `]`: the earlier `[` is used.
        let p = parse_action("a[b[]");
        assert_eq!((p.name, p.arg), ("a", Some("b[")));
    }
}
