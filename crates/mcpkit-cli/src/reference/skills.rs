//! The reference server's skills (the Skills extension, `io.modelcontextprotocol/skills`): the
//! fixtures the conformance suite's `sep-2640-skills-*` scenarios exercise, served from memory.
//!
//! - `pdf-processing`: a `SKILL.md` with extra frontmatter (`license`, `metadata`) and files in
//!   two subdirectories, so a directory read has a subdirectory child to descend into.
//! - `acme/billing/refunds`: a skill under an organisational prefix.
//! - `git-workflow`: a skill of one file.

use mcpkit::server::extensions::skills::{SkillDef, SkillError, Skills};

/// `skill://pdf-processing/SKILL.md`.
pub const PDF_SKILL_MD: &str = "---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  version: \"2.1.0\"
---

# PDF processing

Read `references/FORMS.md` before filling a form; run `scripts/extract.py` to pull text out
of a document; start an invoice from `templates/invoice.md`.
";

/// `skill://pdf-processing/references/FORMS.md`.
pub const PDF_FORMS_MD: &str = "# Forms\n\nFill every field; leave none blank.\n";

/// `skill://pdf-processing/scripts/extract.py`.
pub const PDF_EXTRACT_PY: &str = "import sys\n\nprint(open(sys.argv[1], 'rb').read()[:100])\n";

/// `skill://pdf-processing/templates/invoice.md`.
pub const PDF_INVOICE_MD: &str = "# Invoice\n\nNumber: {number}\nTotal: {total}\n";

/// `skill://acme/billing/refunds/SKILL.md`.
pub const REFUNDS_SKILL_MD: &str = "---
name: refunds
description: Process customer refund requests per company policy
---

# Refunds

Check the order date, then use `examples/email.md` to answer the customer.
";

/// `skill://acme/billing/refunds/examples/email.md`.
pub const REFUNDS_EMAIL_MD: &str = "Dear customer,\n\nYour refund is on its way.\n";

/// `skill://git-workflow/SKILL.md`.
pub const GIT_SKILL_MD: &str = "---
name: git-workflow
description: Follow this team's Git conventions for branching and commits
---

Branch from main, rebase before merging, one topic per commit.
";

/// The reference skills.
pub fn skills() -> Result<Skills, SkillError> {
    Skills::new()
        .skill(
            SkillDef::new("pdf-processing", PDF_SKILL_MD)
                .file("references/FORMS.md", PDF_FORMS_MD)
                .file("scripts/extract.py", PDF_EXTRACT_PY)
                .file("templates/invoice.md", PDF_INVOICE_MD),
        )?
        .skill(SkillDef::new("acme/billing/refunds", REFUNDS_SKILL_MD).file("examples/email.md", REFUNDS_EMAIL_MD))?
        .skill(SkillDef::new("git-workflow", GIT_SKILL_MD))
}
