//! The HTTP bridge: a server exposing native sessions under AgentGym's WebShop API, and a client implementing
//! [`Environment`](act_core::Environment) over any server speaking it.

mod client;
mod server;

pub use client::{RemoteConfig, RemoteWebShop};
pub use server::{ServerConfig, ServerHandle, StepResponse, router};
