//! The state of one episode in play (upstream's per-user session), shared by the environment, which advances it,
//! and the expert, which reads it.

use act_core::TaskInfo;

use crate::pages::{Page, PageKind};
use crate::reward::RewardBreakdown;

/// The session state upstream keeps per user.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) kind: PageKind,
    pub(crate) keywords: String,
    pub(crate) results: Vec<usize>,
    pub(crate) page_num: usize,
    pub(crate) product: Option<usize>,
    /// Chosen options, in the order first chosen (a Python dict).
    pub(crate) options: Vec<(String, String)>,
    /// Every query searched this episode.
    pub(crate) searches: Vec<String>,
}

impl Session {
    pub(crate) fn new() -> Self {
        Session {
            kind: PageKind::Start,
            keywords: String::new(),
            results: Vec::new(),
            page_num: 1,
            product: None,
            options: Vec::new(),
            searches: Vec::new(),
        }
    }
}

/// One episode in play: its goal, session and current page.
#[derive(Debug, Clone)]
pub(crate) struct Episode {
    pub(crate) goal_index: usize,
    pub(crate) task: TaskInfo,
    pub(crate) session: Session,
    pub(crate) page: Page,
    pub(crate) steps: usize,
    pub(crate) done: bool,
    pub(crate) purchase: Option<RewardBreakdown>,
}
