//! The pages (wasm only): the app, the chapters with their demos in frames, the address bar,
//! search and the reference pages. Demos are drawn with the kit (`crate::kit`).
pub mod address_bar;
pub mod app;
pub mod control_panel;
pub mod demo_frame;
pub mod exercises;
pub mod offline;
pub mod pages;
pub mod plot_in_view;
pub mod prose;
pub mod reference;
pub mod scroll_focus;
pub mod search;
