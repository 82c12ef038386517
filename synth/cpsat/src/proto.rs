//! Hand-written prost messages for the parts of OR-Tools' `cp_model.proto` (proto3) and
//! `sat_parameters.proto` (proto2) that drtc uses. No protoc, no generated code.
//!
//! Field numbers are facts of the public proto files, read from the pinned wheel
//! (`ortools==9.15.6755`) with
//! `python3 -c "from ortools.sat import cp_model_pb2 as p; print({f.name: f.number for f in p.ConstraintProto.DESCRIPTOR.fields})"`
//! (and likewise for every message below). Fields not listed here are simply never sent, and
//! unknown fields of a response are skipped by the decoder.
//!
//! Only messages built from these structs are ever handed to the solver: bytes that are not
//! a valid protobuf make OR-Tools abort the whole process.

/// `operations_research.sat.CpModelProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CpModelProto {
    /// `name = 1`
    #[prost(string, tag = "1")]
    pub name: String,
    /// `variables = 2`
    #[prost(message, repeated, tag = "2")]
    pub variables: Vec<IntegerVariableProto>,
    /// `constraints = 3`
    #[prost(message, repeated, tag = "3")]
    pub constraints: Vec<ConstraintProto>,
    /// `objective = 4`
    #[prost(message, optional, tag = "4")]
    pub objective: Option<CpObjectiveProto>,
    /// `search_strategy = 5`
    #[prost(message, repeated, tag = "5")]
    pub search_strategy: Vec<DecisionStrategyProto>,
    /// `solution_hint = 6`
    #[prost(message, optional, tag = "6")]
    pub solution_hint: Option<PartialVariableAssignment>,
}

/// `IntegerVariableProto`: `name = 1`, `domain = 2` (sorted disjoint intervals, flattened).
#[derive(Clone, PartialEq, prost::Message)]
pub struct IntegerVariableProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int64, repeated, tag = "2")]
    pub domain: Vec<i64>,
}

/// `BoolArgumentProto`: `literals = 1`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BoolArgumentProto {
    #[prost(int32, repeated, tag = "1")]
    pub literals: Vec<i32>,
}

/// `LinearExpressionProto`: `vars = 1`, `coeffs = 2`, `offset = 3`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LinearExpressionProto {
    #[prost(int32, repeated, tag = "1")]
    pub vars: Vec<i32>,
    #[prost(int64, repeated, tag = "2")]
    pub coeffs: Vec<i64>,
    #[prost(int64, tag = "3")]
    pub offset: i64,
}

/// `LinearArgumentProto`: `target = 1`, `exprs = 2` (products, divisions, max).
#[derive(Clone, PartialEq, prost::Message)]
pub struct LinearArgumentProto {
    #[prost(message, optional, tag = "1")]
    pub target: Option<LinearExpressionProto>,
    #[prost(message, repeated, tag = "2")]
    pub exprs: Vec<LinearExpressionProto>,
}

/// `LinearConstraintProto`: `vars = 1`, `coeffs = 2`, `domain = 3`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LinearConstraintProto {
    #[prost(int32, repeated, tag = "1")]
    pub vars: Vec<i32>,
    #[prost(int64, repeated, tag = "2")]
    pub coeffs: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub domain: Vec<i64>,
}

/// `AllDifferentConstraintProto`: `exprs = 1`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AllDifferentConstraintProto {
    #[prost(message, repeated, tag = "1")]
    pub exprs: Vec<LinearExpressionProto>,
}

/// `ConstraintProto`: `name = 1`, `enforcement_literal = 2`, and one constraint.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ConstraintProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int32, repeated, tag = "2")]
    pub enforcement_literal: Vec<i32>,
    #[prost(oneof = "Constraint", tags = "3, 4, 7, 11, 12, 13, 26, 27, 29")]
    pub constraint: Option<Constraint>,
}

/// The `constraint` oneof of `ConstraintProto`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Constraint {
    /// `bool_or = 3`
    #[prost(message, tag = "3")]
    BoolOr(BoolArgumentProto),
    /// `bool_and = 4`
    #[prost(message, tag = "4")]
    BoolAnd(BoolArgumentProto),
    /// `int_div = 7`
    #[prost(message, tag = "7")]
    IntDiv(LinearArgumentProto),
    /// `int_prod = 11`
    #[prost(message, tag = "11")]
    IntProd(LinearArgumentProto),
    /// `linear = 12`
    #[prost(message, tag = "12")]
    Linear(LinearConstraintProto),
    /// `all_diff = 13`
    #[prost(message, tag = "13")]
    AllDiff(AllDifferentConstraintProto),
    /// `at_most_one = 26`
    #[prost(message, tag = "26")]
    AtMostOne(BoolArgumentProto),
    /// `lin_max = 27`
    #[prost(message, tag = "27")]
    LinMax(LinearArgumentProto),
    /// `exactly_one = 29`
    #[prost(message, tag = "29")]
    ExactlyOne(BoolArgumentProto),
}

/// `CpObjectiveProto` (minimized): `vars = 1`, `offset = 2`, `scaling_factor = 3`, `coeffs = 4`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CpObjectiveProto {
    #[prost(int32, repeated, tag = "1")]
    pub vars: Vec<i32>,
    #[prost(double, tag = "2")]
    pub offset: f64,
    #[prost(double, tag = "3")]
    pub scaling_factor: f64,
    #[prost(int64, repeated, tag = "4")]
    pub coeffs: Vec<i64>,
}

/// `PartialVariableAssignment` (solution hints): `vars = 1`, `values = 2`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PartialVariableAssignment {
    #[prost(int32, repeated, tag = "1")]
    pub vars: Vec<i32>,
    #[prost(int64, repeated, tag = "2")]
    pub values: Vec<i64>,
}

/// `DecisionStrategyProto`: `variables = 1`, `variable_selection_strategy = 2`,
/// `domain_reduction_strategy = 3` (enums sent as their numbers).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DecisionStrategyProto {
    #[prost(int32, repeated, tag = "1")]
    pub variables: Vec<i32>,
    #[prost(int32, tag = "2")]
    pub variable_selection_strategy: i32,
    #[prost(int32, tag = "3")]
    pub domain_reduction_strategy: i32,
}

/// `CpSolverResponse`: `status = 1`, `solution = 2`, `objective_value = 3`,
/// `num_conflicts = 11`, `num_branches = 12`, `wall_time = 15`, `solution_info = 20`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CpSolverResponse {
    #[prost(int32, tag = "1")]
    pub status: i32,
    #[prost(int64, repeated, tag = "2")]
    pub solution: Vec<i64>,
    #[prost(double, tag = "3")]
    pub objective_value: f64,
    #[prost(int64, tag = "11")]
    pub num_conflicts: i64,
    #[prost(int64, tag = "12")]
    pub num_branches: i64,
    #[prost(double, tag = "15")]
    pub wall_time: f64,
    #[prost(string, tag = "20")]
    pub solution_info: String,
}

/// `SatParameters` (proto2: every field has presence; unset = the solver's default).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SatParameters {
    /// `random_seed = 31`
    #[prost(int32, optional, tag = "31")]
    pub random_seed: Option<i32>,
    /// `max_time_in_seconds = 36`
    #[prost(double, optional, tag = "36")]
    pub max_time_in_seconds: Option<f64>,
    /// `log_search_progress = 41`
    #[prost(bool, optional, tag = "41")]
    pub log_search_progress: Option<bool>,
    /// `max_deterministic_time = 67`
    #[prost(double, optional, tag = "67")]
    pub max_deterministic_time: Option<f64>,
    /// `search_branching = 82` (enum `SearchBranching`)
    #[prost(int32, optional, tag = "82")]
    pub search_branching: Option<i32>,
    /// `cp_model_presolve = 86`
    #[prost(bool, optional, tag = "86")]
    pub cp_model_presolve: Option<bool>,
    /// `randomize_search = 103`
    #[prost(bool, optional, tag = "103")]
    pub randomize_search: Option<bool>,
    /// `search_random_variable_pool_size = 104`
    #[prost(int64, optional, tag = "104")]
    pub search_random_variable_pool_size: Option<i64>,
    /// `permute_variable_randomly = 178`
    #[prost(bool, optional, tag = "178")]
    pub permute_variable_randomly: Option<bool>,
    /// `num_workers = 206`
    #[prost(int32, optional, tag = "206")]
    pub num_workers: Option<i32>,
}
