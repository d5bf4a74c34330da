//! The variants the catalogue declares as cust's are the ones `casebook-cust`
//! serves, and only those. This test links cust, so it links the libcuda
//! stub, which its own run path finds (see build.rs); it makes no CUDA call.

use std::collections::BTreeSet;

use casebook_model::{Binding, Runner, TrialId};

#[test]
fn serves_exactly_the_declared_cust_variants() {
    let declared: BTreeSet<TrialId> = cuda_casebook::catalog()
        .iter()
        .flat_map(|s| {
            s.variants
                .iter()
                .filter(|v| matches!(v.runner, Runner::External { .. }))
                .inspect(|v| assert_eq!(v.binding, Binding::Cust))
                .map(move |v| s.trial_id(v))
        })
        .collect();
    let served: BTreeSet<TrialId> = casebook_cust::served().map(|(trial, _)| trial).collect();
    assert_eq!(declared, served);
}
