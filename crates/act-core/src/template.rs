//! A minimal `{placeholder}` renderer for prompt templates (`{{` and `}}` are literal braces).
//!
//! Templates are validated once, up front, so rendering cannot fail.

use crate::error::TemplateError;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Placeholder(String),
}

/// A parsed, validated template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `text`, checking every placeholder is in `known` and every name in `required` is used.
    pub(crate) fn parse(name: &str, text: &str, known: &[&str], required: &[&str]) -> Result<Self, TemplateError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((offset, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|&(_, n)| n) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|&(_, n)| n) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut placeholder = String::new();
                    let mut closed = false;
                    for (_, n) in chars.by_ref() {
                        if n == '}' {
                            closed = true;
                            break;
                        }
                        placeholder.push(n);
                    }
                    if !closed {
                        return Err(TemplateError::Unclosed { template: name.to_owned(), offset });
                    }
                    if !known.contains(&placeholder.as_str()) {
                        return Err(TemplateError::UnknownPlaceholder {
                            template: name.to_owned(),
                            placeholder,
                            known: known.join(", "),
                        });
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Placeholder(placeholder));
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        for needed in required {
            if !pieces.iter().any(|p| matches!(p, Piece::Placeholder(n) if n == needed)) {
                return Err(TemplateError::MissingPlaceholder {
                    template: name.to_owned(),
                    placeholder: (*needed).to_owned(),
                });
            }
        }
        Ok(Template { pieces })
    }

    /// Renders with `value(name)` for each placeholder (validated names only reach `value`).
    pub(crate) fn render(&self, value: impl Fn(&str) -> String) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Placeholder(name) => out.push_str(&value(name)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_escapes() {
        let t = Template::parse("t", "a {x} {{b}} {y}", &["x", "y"], &["x"]).unwrap();
        assert_eq!(t.render(|n| n.to_uppercase()), "a X {b} Y");
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(matches!(
            Template::parse("t", "{z}", &["x"], &[]),
            Err(TemplateError::UnknownPlaceholder { placeholder, .. }) if placeholder == "z"
        ));
        assert_eq!(
            Template::parse("t", "ab {x", &["x"], &[]),
            Err(TemplateError::Unclosed { template: "t".into(), offset: 3 })
        );
        assert!(matches!(
            Template::parse("t", "{x}", &["x", "y"], &["y"]),
            Err(TemplateError::MissingPlaceholder { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(text in proptest::prelude::any::<String>()) {
            let _ = Template::parse("t", &text, &["x"], &[]);
        }
    }
}
