//! What the subset or the op set does not cover fails with a message naming the construct,
//! the source line and a caret (snapshots of the rendered reports).

use drtc_frontends::lower;

fn report(src: &str) -> String {
    match lower(src) {
        Ok(l) => panic!(
            "expected an error, got a graph:\n{}",
            drtc_ir::text::print(&l.graph)
        ),
        Err(e) => e.render("prog.py", src),
    }
}

const HEADER: &str = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";

fn seed(body: &str) -> String {
    format!("{HEADER}def get_inputs():\n    return [torch.randn(4, 8)]\n\ndef fused_operator(x):\n{body}")
}

#[test]
fn random_dropout_in_forward() {
    let src = format!(
        "{HEADER}class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout(0.2)\n\n    def forward(self, x):\n        return self.drop(x)\n\ndef get_inputs():\n    return [torch.rand(2, 3)]\n\ndef get_init_inputs():\n    return []\n"
    );
    insta::assert_snapshot!(report(&src));
}

#[test]
fn random_rand_in_forward() {
    insta::assert_snapshot!(report(&seed(
        "    noise = torch.rand(4, 8)\n    return [x + noise]\n"
    )));
}

#[test]
fn control_flow_is_outside_the_subset() {
    insta::assert_snapshot!(report(&seed(
        "    if x.sum() > 0:\n        x = x * 2\n    return [x]\n"
    )));
}

#[test]
fn unknown_function() {
    insta::assert_snapshot!(report(&seed(
        "    y = torch.special.i0(x)\n    return [y]\n"
    )));
}

#[test]
fn shape_error_points_at_the_call() {
    insta::assert_snapshot!(report(&seed(
        "    y = torch.matmul(x, x)\n    return [y]\n"
    )));
}

#[test]
fn syntax_error() {
    insta::assert_snapshot!(report(&seed("    y = torch.relu(x\n    return [y]\n")));
}

#[test]
fn bad_indentation() {
    insta::assert_snapshot!(report(&seed("    y = torch.relu(x)\n  return [y]\n")));
}

#[test]
fn eval_mode_batch_norm() {
    insta::assert_snapshot!(report(&seed(
        "    w = torch.ones(8)\n    y = F.batch_norm(x, None, None, w, w, training=False)\n    return [y]\n"
    )));
}

#[test]
fn not_a_program() {
    insta::assert_snapshot!(report("x = 1\n"));
}

#[test]
fn chunk_needs_a_positive_count() {
    insta::assert_snapshot!(report(&seed(
        "    a, b = x.chunk(0, dim=1)\n    return [a, b]\n"
    )));
}

#[test]
fn split_sizes_must_sum_to_the_dimension() {
    insta::assert_snapshot!(report(&seed(
        "    a, b = torch.split(x, [3, 4], dim=1)\n    return [a, b]\n"
    )));
}

#[test]
fn split_size_must_be_an_int_or_a_list() {
    insta::assert_snapshot!(report(&seed(
        "    a, b = x.split(2.5, 1)\n    return [a, b]\n"
    )));
}

#[test]
fn masked_fill_needs_a_bool_mask() {
    insta::assert_snapshot!(report(&seed(
        "    y = x.masked_fill(x, 0.0)\n    return [y]\n"
    )));
}

#[test]
fn masked_fill_value_is_a_number_or_a_0_dim_tensor() {
    insta::assert_snapshot!(report(&seed(
        "    y = torch.masked_fill(x, x > 0, x[0])\n    return [y]\n"
    )));
}
