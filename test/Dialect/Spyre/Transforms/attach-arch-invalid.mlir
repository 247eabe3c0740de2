// A malformed description attached to the module is an error of every pass.
// RUN: spyre-opt %s -split-input-file -spyre-divide-work -verify-diagnostics

// expected-error @+1 {{'spyre.arch' is not a dictionary with a 'name'}}
module attributes {spyre.arch = 1 : i64} {
}

// -----

// expected-error @+1 {{spyre.arch: key 'card.cores' is missing}}
module attributes {spyre.arch = {name = "half"}} {
}
