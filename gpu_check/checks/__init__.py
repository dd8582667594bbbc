"""Check groups: layouts (registers and memory against the catalog), numerics (result bits
against layoutsim.mma), banks (ncu wavefronts against the bank model). Each compares through
host code that live runs and recorded dumps share."""
