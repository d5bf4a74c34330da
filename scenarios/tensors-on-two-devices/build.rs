casebook_build::build_scenario!();
