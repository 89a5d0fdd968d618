//! `mpit-prof`'s data: one rank's profile ([`model::RankProfile`], what the preload library
//! sends to rank 0), its reduction across ranks and the files written from it.

pub mod model;
