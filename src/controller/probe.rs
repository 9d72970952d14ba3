//! The controller serving a store: `<state_dir>/controller.lock` holder and `daemon.persistence`.
