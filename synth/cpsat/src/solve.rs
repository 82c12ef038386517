//! Solving: typed parameters in, a typed solution out.

use crate::proto::SatParameters;
use crate::{BoolVar, CpModel, CpSat, CpSatError, IntVar, LinearExpr};

/// The solver's verdict (`CpSolverStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// No solution found within the limits, and no proof there is none.
    Unknown,
    ModelInvalid,
    Feasible,
    Infeasible,
    Optimal,
}

impl Status {
    fn from_proto(v: i32) -> Status {
        match v {
            1 => Status::ModelInvalid,
            2 => Status::Feasible,
            3 => Status::Infeasible,
            4 => Status::Optimal,
            _ => Status::Unknown,
        }
    }
    /// A solution is available.
    pub fn has_solution(self) -> bool {
        matches!(self, Status::Feasible | Status::Optimal)
    }
}

/// How the search runs (`SearchBranching`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Branching {
    Automatic = 0,
    /// Follow the model's decision strategies.
    Fixed = 1,
    Portfolio = 2,
    Randomized = 8,
}

/// Solver parameters. `Default` = one worker, no time limit, seed 0.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveParams {
    pub seed: i32,
    /// Wall-clock limit in seconds.
    pub time_limit_s: Option<f64>,
    /// Deterministic-time limit (reproducible, unlike the wall-clock limit).
    pub deterministic_limit: Option<f64>,
    /// Number of search workers (1 keeps runs reproducible for a seed).
    pub workers: i32,
    pub randomize_search: bool,
    pub permute_variables: bool,
    pub branching: Branching,
    pub log: bool,
}

impl Default for SolveParams {
    fn default() -> Self {
        SolveParams {
            seed: 0,
            time_limit_s: None,
            deterministic_limit: None,
            workers: 1,
            randomize_search: false,
            permute_variables: false,
            branching: Branching::Automatic,
            log: false,
        }
    }
}

impl SolveParams {
    fn proto(&self) -> SatParameters {
        SatParameters {
            random_seed: Some(self.seed),
            max_time_in_seconds: self.time_limit_s,
            log_search_progress: Some(self.log),
            max_deterministic_time: self.deterministic_limit,
            search_branching: Some(self.branching as i32),
            cp_model_presolve: None,
            randomize_search: Some(self.randomize_search),
            search_random_variable_pool_size: None,
            permute_variable_randomly: Some(self.permute_variables),
            num_workers: Some(self.workers),
        }
    }
}

/// The result of a solve.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    pub status: Status,
    values: Vec<i64>,
    pub objective: f64,
    pub wall_time_s: f64,
    pub conflicts: i64,
    pub branches: i64,
}

impl Solution {
    /// The value of `v` (0 when there is no solution).
    pub fn value(&self, v: IntVar) -> i64 {
        self.values.get(v.index()).copied().unwrap_or(0)
    }
    pub fn bool_value(&self, b: BoolVar) -> bool {
        self.eval(&b.expr()) != 0
    }
    /// The value of a linear expression.
    pub fn eval(&self, e: &LinearExpr) -> i64 {
        e.eval_with(|v| self.value(v))
    }
}

impl CpSat {
    /// Solves `model`. An invalid model (as judged by CP-SAT's validator) is an error
    /// carrying the solver's message.
    pub fn solve(&self, model: &CpModel, params: &SolveParams) -> Result<Solution, CpSatError> {
        let r = self.solve_proto(&model.to_proto(), &params.proto())?;
        let status = Status::from_proto(r.status);
        if status == Status::ModelInvalid {
            return Err(CpSatError::ModelInvalid(r.solution_info));
        }
        Ok(Solution {
            status,
            values: r.solution,
            objective: r.objective_value,
            wall_time_s: r.wall_time,
            conflicts: r.num_conflicts,
            branches: r.num_branches,
        })
    }
}
