//! Solves small models through the real library and checks the answers against the
//! constraints (the library is found the same way drtc finds it).

use drtc_cpsat::*;

fn solver() -> CpSat {
    CpSat::load().expect("libortools.so.9 must be installed (drtc setup)")
}

#[test]
fn linear_product_division_and_max() {
    let cp = solver();
    let mut m = CpModel::new();
    let x = m.new_int(1, 100, "x");
    let y = m.new_int(1, 100, "y");
    let p = m.new_int(0, 10_000, "p");
    let q = m.new_int(0, 100, "q");
    let mx = m.new_int(0, 100, "mx");
    m.add_product(p, &[x.into(), y.into()]);
    m.add_eq(p, 391); // 17 * 23
    m.add_lt(x, y);
    m.add_division(q, y + 5, x);
    m.add_max_equality(mx, &[x.into(), LinearExpr::from(y) - 3]);
    let s = cp.solve(&m, &SolveParams::default()).unwrap();
    assert!(s.status.has_solution(), "{:?}", s.status);
    assert_eq!((s.value(x), s.value(y)), (17, 23));
    assert_eq!(s.value(q), (23 + 5) / 17);
    assert_eq!(s.value(mx), 20);
}

#[test]
fn enforcement_literals_and_booleans() {
    let cp = solver();
    let mut m = CpModel::new();
    let b = m.new_bool("b");
    let c = m.new_bool("c");
    let x = m.new_int(0, 10, "x");
    let ct = m.add_eq(x, 7);
    m.only_enforce_if(ct, &[b]);
    let ct = m.add_eq(x, 3);
    m.only_enforce_if(ct, &[!b]);
    m.add_exactly_one(&[b, c]);
    m.add_bool_or(&[c]);
    let s = cp.solve(&m, &SolveParams::default()).unwrap();
    assert!(s.status.has_solution());
    assert!(!s.bool_value(b) && s.bool_value(c));
    assert_eq!(s.value(x), 3);
}

#[test]
fn objective_all_different_and_infeasibility() {
    let cp = solver();
    let mut m = CpModel::new();
    let v: Vec<IntVar> = (0..4).map(|i| m.new_int(1, 4, &format!("v{i}"))).collect();
    let exprs: Vec<LinearExpr> = v.iter().map(|&x| x.into()).collect();
    m.add_all_different(&exprs);
    m.maximize(v[0] * 10 + v[1]);
    let s = cp.solve(&m, &SolveParams::default()).unwrap();
    assert_eq!(s.status, Status::Optimal);
    assert_eq!((s.value(v[0]), s.value(v[1])), (4, 3));
    assert_eq!(s.objective, 43.0);

    m.add_eq(v[0], v[1]);
    let s = cp.solve(&m, &SolveParams::default()).unwrap();
    assert_eq!(s.status, Status::Infeasible);
}

#[test]
fn hints_and_strategies_are_accepted() {
    let cp = solver();
    let mut m = CpModel::new();
    let v: Vec<IntVar> = (0..3)
        .map(|i| m.new_int(1, 1000, &format!("v{i}")))
        .collect();
    m.add_le(LinearExpr::sum(v.iter().copied()), 1500);
    for (i, &x) in v.iter().enumerate() {
        m.add_hint(x, 100 * (i as i64 + 1));
    }
    m.add_decision_strategy(&v, VarSelection::First, DomainReduction::RandomHalf);
    let params = SolveParams {
        branching: Branching::Fixed,
        seed: 7,
        ..SolveParams::default()
    };
    let s = cp.solve(&m, &params).unwrap();
    assert!(s.status.has_solution());
    assert!(v.iter().map(|&x| s.value(x)).sum::<i64>() <= 1500);
}

#[test]
fn invalid_models_are_errors_not_aborts() {
    let cp = solver();
    let mut m = CpModel::new();
    let x = m.new_int(0, 10, "x");
    // a divisor whose domain contains 0 is rejected by CP-SAT's validator
    let q = m.new_int(0, 10, "q");
    m.add_division(q, 10, x);
    match cp.solve(&m, &SolveParams::default()) {
        Err(CpSatError::ModelInvalid(msg)) => assert!(!msg.is_empty()),
        other => panic!("expected an invalid model, got {other:?}"),
    }
}

#[test]
fn missing_library_error_names_the_install_command() {
    let err = CpSat::load_from(std::path::Path::new("/nonexistent/libortools.so.9")).unwrap_err();
    assert!(matches!(err, CpSatError::Load { .. }));
    let nf = CpSatError::NotFound {
        tried: "x".into(),
        version: ORTOOLS_VERSION,
    };
    assert!(nf.to_string().contains("pip install --no-deps"));
}
