//! The browser app (wasm only): Leptos components, canvas plots, URL and storage glue.
pub mod address_bar;
pub mod app;
pub mod browser;
pub mod controls;
pub mod demo_frame;
pub mod pages;
pub mod plot;
pub mod reference;
pub mod scroll_focus;
pub mod search;
pub mod seq2seq_models;
pub mod theme;
pub mod views;
