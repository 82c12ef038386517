//! Code blocks out of a model's answer: the first or last ```python block, after dropping
//! `<think>` sections (reasoning models draft code there that is not their answer).

use serde::{Deserialize, Serialize};

/// Which python block of an answer is the candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extract {
    First,
    #[default]
    Last,
}

/// Removes `<think>...</think>` sections; an unclosed `<think>` runs to the end.
fn strip_thinking(answer: &str) -> String {
    let mut out = String::new();
    let mut rest = answer;
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</think>") {
            Some(end) => rest = &rest[start + end + "</think>".len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// A fenced block: its info string's first word (lowercase) and its body.
struct Block {
    lang: String,
    body: String,
}

/// Closed fenced blocks in order. A block left open (an answer cut by `max_tokens`) is not
/// a block: its code is incomplete.
fn blocks(text: &str) -> Vec<Block> {
    let mut found = vec![];
    let mut open: Option<(String, usize, Vec<&str>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let indent = line.len() - trimmed.len();
                    let lang = info.split_whitespace().next().unwrap_or("").to_lowercase();
                    open = Some((lang, indent, vec![]));
                }
            }
            Some((lang, indent, body)) => {
                if trimmed.trim_end() == "```" {
                    found.push(Block {
                        lang: std::mem::take(lang),
                        body: body.join("\n"),
                    });
                    open = None;
                } else {
                    // drop the fence's own indentation (blocks inside list items)
                    let cut = line
                        .char_indices()
                        .take_while(|&(i, c)| i < *indent && c == ' ')
                        .count();
                    body.push(&line[cut..]);
                }
            }
        }
    }
    found
}

/// The python code block the answer gives (`python`, `py` or `python3` fences; untagged
/// fences only when the answer has no tagged one), or `None` when it has none.
pub fn extract_code(answer: &str, which: Extract) -> Option<String> {
    let text = strip_thinking(answer);
    let all = blocks(&text);
    let tagged: Vec<&Block> = all
        .iter()
        .filter(|b| matches!(b.lang.as_str(), "python" | "py" | "python3"))
        .collect();
    let chosen: Vec<&Block> = if tagged.is_empty() {
        all.iter().filter(|b| b.lang.is_empty()).collect()
    } else {
        tagged
    };
    let block = match which {
        Extract::First => chosen.first(),
        Extract::Last => chosen.last(),
    }?;
    let code = block.body.trim_matches('\n');
    (!code.trim().is_empty()).then(|| format!("{code}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_and_first_python_blocks() {
        let a = "Plan:\n```python\nx = 1\n```\ntext\n```bash\nls\n```\n```py\ny = 2\n```\n";
        assert_eq!(extract_code(a, Extract::First).as_deref(), Some("x = 1\n"));
        assert_eq!(extract_code(a, Extract::Last).as_deref(), Some("y = 2\n"));
    }

    #[test]
    fn no_block_or_only_other_languages() {
        assert_eq!(extract_code("just prose", Extract::Last), None);
        assert_eq!(extract_code("```bash\nls\n```", Extract::Last), None);
        assert_eq!(extract_code("```python\n\n```", Extract::Last), None);
    }

    #[test]
    fn untagged_blocks_only_without_tagged_ones() {
        assert_eq!(
            extract_code("```\nz = 3\n```", Extract::Last).as_deref(),
            Some("z = 3\n")
        );
        let a = "```\nz = 3\n```\n```python\nw = 4\n```";
        assert_eq!(extract_code(a, Extract::First).as_deref(), Some("w = 4\n"));
    }

    #[test]
    fn thinking_is_not_the_answer() {
        let a = "<think>\n```python\ndraft = 0\n```\n</think>\n```python\nfinal = 1\n```";
        assert_eq!(
            extract_code(a, Extract::First).as_deref(),
            Some("final = 1\n")
        );
        let cut = "```python\nok = 1\n```\n<think>\n```python\nnever = 1\n```";
        assert_eq!(
            extract_code(cut, Extract::Last).as_deref(),
            Some("ok = 1\n")
        );
    }

    #[test]
    fn truncated_block_is_not_code() {
        let a = "```python\nimport torch\ndef f(x):\n    return";
        assert_eq!(extract_code(a, Extract::Last), None);
    }

    #[test]
    fn indented_fence_drops_its_indent() {
        let a = "1. code:\n   ```python\n   def f():\n       return 1\n   ```\n";
        assert_eq!(
            extract_code(a, Extract::Last).as_deref(),
            Some("def f():\n    return 1\n")
        );
    }
}
