//! How a plan shows the framework's route: the route taken (asked with `plan --probe`, and
//! always by install), or the order the candidates will be asked in.

use serde::Serialize;

use crate::model::plan::{Action, Plan};

use super::route::{Attempt, Candidate, Layout, Route, RouteKind, TorchSource};

/// The plan with its framework component's index rewritten for the route (taken, or first in
/// line), so that `from …` in the plan is where the wheels come from.
pub fn apply(plan: &Plan, route: &RouteView) -> Plan {
    let mut plan = plan.clone();
    let main = plan.profile.framework_component().unwrap_or("torch");
    // The route first in line serves another build than the planned one (PyPI's CUDA torch
    // for the cpu profile, PyTorch's index being out of reach): the row says so.
    let note = match route {
        RouteView::NotProbed { candidates, .. } => candidates
            .iter()
            .find(|c| c.refused.is_none())
            .and_then(|c| c.note.clone()),
        _ => None,
    };
    if let Some(index) = route.index() {
        for c in plan.components.iter_mut() {
            if c.name == main && c.action != Action::Keep {
                c.index_url = Some(index.clone());
                if let Some(note) = &note {
                    c.reason = format!("{}; {note}", c.reason);
                }
            }
        }
    }
    plan
}

/// The `plan --json` (and `install --json`) document: the plan as [`apply`] rewrites it, the
/// framework component with its `route` and `route_reason`, and the whole route (or the order
/// of the candidates) as `framework_route`.
pub fn describe_in_plan(plan: &Plan, route: &RouteView) -> serde_json::Value {
    let mut doc = serde_json::to_value(apply(plan, route)).expect("the plan serialises");
    let main = plan.profile.framework_component().unwrap_or("torch");
    if let Some(components) = doc["components"].as_array_mut() {
        for c in components {
            if c["name"] == main && c["action"] != serde_json::json!(Action::Keep) {
                c["route"] = route.kind().map(|k| k.to_string()).into();
                c["route_reason"] = route.why().into();
            }
        }
    }
    doc["framework_route"] = serde_json::to_value(route).expect("serialises");
    doc
}

/// A route as `plan` shows it: chosen by asking (with `--probe`, and always at install), or the
/// order cudaup would ask in.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum RouteView {
    /// Not asked: the candidates in order.
    NotProbed {
        /// `--torch-source`.
        source: TorchSource,
        /// The planned build, which names PyTorch's per-variant index.
        #[serde(skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
        /// The routes in the order install asks them.
        candidates: Vec<Candidate>,
    },
    /// Asked: the one that serves the plan.
    Chosen(Box<Route>),
    /// Asked: none can.
    None {
        /// In words.
        error: String,
        /// How each answered.
        attempts: Vec<Attempt>,
    },
}

impl RouteView {
    fn index(&self) -> Option<String> {
        match self {
            RouteView::Chosen(r) => Some(match &r.layout {
                Layout::Index { url } | Layout::FindLinks { url } => url.clone(),
            }),
            RouteView::NotProbed {
                candidates,
                variant,
                ..
            } => {
                candidates
                    .iter()
                    .find(|c| c.refused.is_none())
                    .map(|c| match (c.route, variant) {
                        (RouteKind::Pytorch, Some(v)) => {
                            format!("{}/{v}", c.base.as_str().trim_end_matches('/'))
                        }
                        _ => c.base.to_string(),
                    })
            }
            RouteView::None { .. } => None,
        }
    }

    fn kind(&self) -> Option<RouteKind> {
        match self {
            RouteView::Chosen(r) => Some(r.route),
            RouteView::NotProbed { candidates, .. } => candidates
                .iter()
                .find(|c| c.refused.is_none())
                .map(|c| c.route),
            RouteView::None { .. } => None,
        }
    }

    fn why(&self) -> String {
        match self {
            RouteView::Chosen(r) => r.why.clone(),
            RouteView::NotProbed {
                source, candidates, ..
            } => {
                let order: Vec<String> = candidates
                    .iter()
                    .map(|c| match (&c.refused, &c.note) {
                        (Some(why), _) => {
                            format!("{} {} (not usable: {why})", c.route.label(), c.base)
                        }
                        (None, Some(note)) => format!("{} {} ({note})", c.route.label(), c.base),
                        (None, None) => format!("{} {}", c.route.label(), c.base),
                    })
                    .collect();
                format!(
                    "--torch-source {source}: install asks {} in this order and takes the first that lists the planned wheel (`plan --probe` asks now)",
                    order.join(", then ")
                )
            }
            RouteView::None { error, .. } => error.clone(),
        }
    }

    /// Lines for the human plan.
    pub fn lines(&self) -> Vec<String> {
        match self {
            RouteView::Chosen(r) => {
                let mut out = vec![format!("{} {}: {}", r.route.label(), r.base, r.why)];
                for a in &r.tried {
                    out.push(format!(
                        "  (not {} {}: {})",
                        a.route.label(),
                        a.base,
                        a.outcome
                    ));
                }
                out
            }
            RouteView::NotProbed { .. } => vec![self.why()],
            RouteView::None { error, .. } => error.lines().map(str::to_owned).collect(),
        }
    }
}
