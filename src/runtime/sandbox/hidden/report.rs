//! The list as `keel sandbox` and `/sandbox` show it: each hidden path that exists with why, the
//! rest of keel's list in one line, and what was named but is not hidden, with why not.

use super::{Entry, Hidden, NotHidden};

impl Hidden {
    /// What `keel sandbox` and `/sandbox` say of it: each hidden path that exists, with why;
    /// those of keel's list that do not exist now, in one line; what was named and not hidden.
    pub fn report(&self) -> String {
        let mut out = String::from(
            "Hidden (empty to commands; refused to read_file, write_file, edit_file, grep, glob \
             and @):\n",
        );
        let (present, absent): (Vec<&Entry>, Vec<&Entry>) =
            self.inner.entries.iter().partition(|entry| entry.path.symlink_metadata().is_ok());
        if present.is_empty() {
            out.push_str("  nothing here now\n");
        }
        for entry in present {
            out.push_str(&format!("  {}\n", crate::visible::visible(&entry.reason())));
        }
        if !absent.is_empty() {
            let names: Vec<&str> = absent.iter().map(|entry| entry.shown.as_str()).collect();
            out.push_str(&format!(
                "  and, should they appear: {}\n",
                crate::visible::visible(&names.join(", "))
            ));
        }
        for not in &self.inner.not_hidden {
            let line = match not {
                NotHidden::HoldsWorkspace(entry) => {
                    format!("Not hidden: {}, which holds the workspace", entry.shown)
                }
                NotHidden::LetThrough(entry) => {
                    format!("Let through by your readable_paths: {}", entry.shown)
                }
                NotHidden::InsideHidden { readable, hidden } => format!(
                    "Still hidden: {readable} of your readable_paths lies inside {hidden}, which \
                     stays hidden whole (let {hidden} through, and hide what it must keep with \
                     hidden_paths)"
                ),
                NotHidden::NothingToLetThrough(readable) => {
                    format!("Nothing hidden lies in {readable} of your readable_paths")
                }
            };
            out.push_str(&format!("{}\n", crate::visible::visible(&line)));
        }
        out
    }
}
