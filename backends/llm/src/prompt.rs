//! Prompts as data: the templates under `data/prompts/` (embedded in the binary, the user
//! message overridable with `--prompt FILE`) filled with `{{name}}` placeholders.
//!
//! A template may use only the placeholders of its kind, each with a non-empty value, and
//! must use the ones its kind requires (`{{program}}` for region and whole prompts,
//! `{{feedback}}` for refinement): anything else is an error, never silently empty.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const SYSTEM_TEMPLATE: &str = include_str!("../../../data/prompts/system.md");
pub const REGION_TEMPLATE: &str = include_str!("../../../data/prompts/region.md");
pub const WHOLE_TEMPLATE: &str = include_str!("../../../data/prompts/whole.md");
pub const REFINE_TEMPLATE: &str = include_str!("../../../data/prompts/refine.md");
/// The one-shot example of region mode: a seed program and its Triton answer.
pub const REGION_EXAMPLE: &str = include_str!("../../../data/prompts/example_region.md");
/// The one-shot example of whole mode: a KernelBench `Model` and its `ModelNew`.
pub const WHOLE_EXAMPLE: &str = include_str!("../../../data/prompts/example_whole.md");

/// semantics.md's value rule, as the prompts state it.
pub const DEFAULT_PRECISION_RULE: &str = "every output must satisfy \
norm(reference - output) / (1e-6 + norm(reference)) < 1e-3 on fresh random inputs, with no \
NaN or Inf where the reference has none; integer and boolean outputs must be exactly equal.";

/// What the model is asked to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptMode {
    /// One seed-format region program (`fused_operator`) -> `triton_fused_operator`.
    Regions,
    /// One KernelBench program (`Model`) -> `ModelNew`.
    Whole,
}

impl PromptMode {
    /// The function or class the answer must define.
    pub fn entry_point(self) -> &'static str {
        match self {
            PromptMode::Regions => "triton_fused_operator",
            PromptMode::Whole => "ModelNew",
        }
    }
}

/// The target a prompt names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptTarget {
    /// GPU name, e.g. `NVIDIA H200`.
    pub gpu: String,
    /// Element type, e.g. `float32`.
    pub dtype: String,
    /// The correctness rule the answer is judged by.
    pub precision_rule: String,
}

impl PromptTarget {
    /// A target with semantics.md's value rule.
    pub fn new(gpu: impl Into<String>, dtype: impl Into<String>) -> Self {
        PromptTarget {
            gpu: gpu.into(),
            dtype: dtype.into(),
            precision_rule: DEFAULT_PRECISION_RULE.into(),
        }
    }
}

/// One chat message, as OpenAI's chat completions API carries it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: "system".into(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: "user".into(),
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: "assistant".into(),
            content: content.into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read prompt template `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{template}:{line}: unknown placeholder `{{{{{name}}}}}` (this template knows: {known})"
    )]
    Unknown {
        template: String,
        line: usize,
        name: String,
        known: String,
    },
    #[error("{template}:{line}: `{{{{` without a closing `}}}}`")]
    Unterminated { template: String, line: usize },
    #[error("{template}:{line}: placeholder `{{{{{name}}}}}` has no value")]
    MissingValue {
        template: String,
        line: usize,
        name: String,
    },
    #[error("{template}: the template never uses `{{{{{name}}}}}`, which it must")]
    MissingPlaceholder { template: String, name: String },
}

/// Fills `template` (named `name` in errors): every `{{key}}` must be one of `vars` with a
/// non-empty value, and every key of `required` must occur. Values are not re-scanned.
pub fn fill(
    name: &str,
    template: &str,
    vars: &[(&str, &str)],
    required: &[&str],
) -> Result<String, PromptError> {
    let mut out = String::with_capacity(template.len());
    let mut used: Vec<&str> = vec![];
    let mut rest = template;
    let line_of = |rest: &str| {
        template[..template.len() - rest.len()]
            .lines()
            .count()
            .max(1)
    };
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let line = line_of(&rest[start..]);
        let Some(end) = after.find("}}") else {
            return Err(PromptError::Unterminated {
                template: name.into(),
                line,
            });
        };
        let key = after[..end].trim();
        let Some(&(k, value)) = vars.iter().find(|(k, _)| *k == key) else {
            return Err(PromptError::Unknown {
                template: name.into(),
                line,
                name: key.into(),
                known: vars.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "),
            });
        };
        if value.trim().is_empty() {
            return Err(PromptError::MissingValue {
                template: name.into(),
                line,
                name: key.into(),
            });
        }
        used.push(k);
        out.push_str(value.trim_end_matches('\n'));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if let Some(missing) = required.iter().find(|r| !used.contains(r)) {
        return Err(PromptError::MissingPlaceholder {
            template: name.into(),
            name: (*missing).into(),
        });
    }
    Ok(out)
}

fn read_override(path: &Path) -> Result<String, PromptError> {
    std::fs::read_to_string(path).map_err(|source| PromptError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The system and user messages asking for `program` (region mode: a seed-format program
/// as `drtc decompose` writes it; whole mode: a KernelBench source). `template_override`
/// replaces the user message's template (`data/prompts/region.md` or `whole.md`).
pub fn render(
    mode: PromptMode,
    program: &str,
    target: &PromptTarget,
    template_override: Option<&Path>,
) -> Result<Vec<ChatMessage>, PromptError> {
    let (default_name, default_template, example) = match mode {
        PromptMode::Regions => ("data/prompts/region.md", REGION_TEMPLATE, REGION_EXAMPLE),
        PromptMode::Whole => ("data/prompts/whole.md", WHOLE_TEMPLATE, WHOLE_EXAMPLE),
    };
    let (name, template) = match template_override {
        Some(path) => (path.display().to_string(), read_override(path)?),
        None => (default_name.to_string(), default_template.to_string()),
    };
    let vars = [
        ("program", program),
        ("gpu", target.gpu.as_str()),
        ("dtype", target.dtype.as_str()),
        ("precision_rule", target.precision_rule.as_str()),
        ("example", example),
    ];
    let system = fill("data/prompts/system.md", SYSTEM_TEMPLATE, &vars, &[])?;
    let user = fill(&name, &template, &vars, &["program"])?;
    Ok(vec![
        ChatMessage::system(system.trim_end()),
        ChatMessage::user(user.trim_end()),
    ])
}

/// The user message of a feedback round: the verifier's or timer's `feedback` on the
/// previous `candidate` (`template_override` replaces `data/prompts/refine.md`).
pub fn render_refine(
    feedback: &str,
    candidate: &str,
    template_override: Option<&Path>,
) -> Result<ChatMessage, PromptError> {
    let (name, template) = match template_override {
        Some(path) => (path.display().to_string(), read_override(path)?),
        None => (
            "data/prompts/refine.md".to_string(),
            REFINE_TEMPLATE.to_string(),
        ),
    };
    let vars = [("feedback", feedback), ("candidate", candidate)];
    let user = fill(&name, &template, &vars, &["feedback"])?;
    Ok(ChatMessage::user(user.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> PromptTarget {
        PromptTarget::new("NVIDIA H200", "float32")
    }

    const SEED: &str = "import torch\n\n\ndef get_inputs():\n    return [\n        torch.randn([4, 8], dtype=torch.float32),\n    ]\n\n\ndef fused_operator(x):\n    tensor_0 = torch.relu(x)\n    return [tensor_0]\n";

    #[test]
    fn region_prompt_has_program_target_and_example() {
        let m = render(PromptMode::Regions, SEED, &target(), None).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].role, "system");
        assert!(m[0].content.contains("NVIDIA H200"));
        assert_eq!(m[1].role, "user");
        let u = &m[1].content;
        assert!(u.contains(&format!("```python\n{}```", SEED)), "{u}");
        assert!(u.contains("float32"));
        assert!(u.contains("norm(reference - output)"));
        assert!(u.contains("def add_relu_kernel"));
        assert!(u.contains("triton_fused_operator(*inputs)"));
        assert!(!u.contains("{{"), "{u}");
    }

    #[test]
    fn whole_prompt_asks_for_model_new() {
        let src = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
        let m = render(PromptMode::Whole, src, &target(), None).unwrap();
        assert!(m[1].content.contains("`ModelNew`"));
        assert!(m[1].content.contains(src.trim_end()));
        assert!(m[1].content.contains("class ModelNew(nn.Module)"));
    }

    #[test]
    fn unknown_placeholder_is_an_error() {
        let e = fill("t", "a\n{{program}} {{gpuu}}", &[("program", "p")], &[]).unwrap_err();
        assert!(matches!(&e, PromptError::Unknown { line: 2, name, .. } if name == "gpuu"));
        assert!(e.to_string().contains("{{gpuu}}"), "{e}");
    }

    #[test]
    fn empty_value_and_missing_placeholder_are_errors() {
        let e = fill("t", "{{gpu}}", &[("gpu", " ")], &[]).unwrap_err();
        assert!(matches!(e, PromptError::MissingValue { .. }));
        let e = fill("t", "no placeholders", &[("program", "p")], &["program"]).unwrap_err();
        assert!(matches!(e, PromptError::MissingPlaceholder { .. }));
        let e = fill("t", "{{program", &[("program", "p")], &[]).unwrap_err();
        assert!(matches!(e, PromptError::Unterminated { .. }));
        let mut t = target();
        t.gpu.clear();
        assert!(render(PromptMode::Regions, SEED, &t, None).is_err());
    }

    #[test]
    fn values_are_not_rescanned() {
        let s = fill("t", "[{{program}}]", &[("program", "{{x}}")], &["program"]).unwrap();
        assert_eq!(s, "[{{x}}]");
    }

    #[test]
    fn override_replaces_the_user_template() {
        let dir = std::env::temp_dir().join(format!("drtc-prompt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mine.md");
        std::fs::write(&path, "Kernel for {{gpu}} please:\n{{program}}\n").unwrap();
        let m = render(PromptMode::Regions, SEED, &target(), Some(&path)).unwrap();
        assert!(m[1]
            .content
            .starts_with("Kernel for NVIDIA H200 please:\nimport torch"));
        std::fs::write(&path, "{{program}} {{feedback}}").unwrap();
        let e = render(PromptMode::Regions, SEED, &target(), Some(&path)).unwrap_err();
        assert!(e.to_string().contains("mine.md:1"), "{e}");
        let e = render(
            PromptMode::Regions,
            SEED,
            &target(),
            Some(&dir.join("nope.md")),
        );
        assert!(matches!(e, Err(PromptError::Read { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refine_message_carries_feedback_and_candidate() {
        let m = render_refine("values: relative error 0.5", "def f(): pass", None).unwrap();
        assert_eq!(m.role, "user");
        assert!(m.content.contains("values: relative error 0.5"));
        assert!(m.content.contains("```python\ndef f(): pass\n```"));
    }
}
