#include "web/assets.h"

namespace modelatlas::web {

const std::string_view kSiteCss = R"css(
:root{--ink:#1d2330;--muted:#5b6475;--line:#d9dde5;--accent:#2f5f9e;--bad:#a33;--good:#2d7a3e}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:#fafbfc}
header{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.6rem 1.2rem;background:#fff;border-bottom:1px solid var(--line)}
.brand{font-weight:700;color:var(--ink);text-decoration:none}
header nav a{margin-right:.8rem}
main{max-width:62rem;margin:0 auto;padding:1rem 1.2rem 3rem}
footer{max-width:62rem;margin:0 auto;padding:1rem 1.2rem;color:var(--muted);font-size:.85rem}
a{color:var(--accent)}
h1{margin:.6rem 0 .2rem}
.sub{color:var(--muted);margin:0 0 1rem}
.verdict{border-left:6px solid var(--accent);background:#fff;padding:.6rem 1rem;margin:1rem 0}
.verdict.closed{border-color:var(--bad)}
.verdict.open{border-color:var(--good)}
.big{font-size:1.35rem;font-weight:650;margin:.2rem 0}
.assumed,.why,.note{color:var(--muted)}
.note{font-size:.9rem;white-space:pre-wrap;border-left:2px solid var(--line);padding-left:.6rem}
section{margin:2rem 0}
dl{display:grid;grid-template-columns:minmax(9rem,14rem) 1fr;gap:.25rem 1rem}
dt{color:var(--muted)}
dd{margin:0}
table{border-collapse:collapse;width:100%;font-size:.92rem;background:#fff}
th,td{border-bottom:1px solid var(--line);padding:.3rem .4rem;text-align:left;vertical-align:top}
tr.nofit td{color:var(--muted)}
code{font-size:.85rem;overflow-wrap:anywhere}
form.workload,form.search{display:flex;flex-wrap:wrap;gap:.6rem;align-items:end;margin:.6rem 0}
label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted)}
input,select,button{font:inherit;padding:.25rem .4rem}
.problem{color:var(--bad)}
svg.memory{max-width:100%;height:auto;font-size:12px}
svg.memory text.value,svg.memory text.card{fill:var(--muted)}
h2.part{border-top:1px solid var(--line);padding-top:1rem}
)css";

const std::string_view kSiteJs = R"js(
// Progressive enhancement only: a changed format re-plans at once.
document.addEventListener('change', function (e) {
  if (e.target.tagName === 'SELECT' && e.target.form && e.target.form.classList.contains('workload')) {
    e.target.form.submit();
  }
});
)js";

const std::string_view kIconSvg =
    R"svg(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f5f9e"/><rect x="3" y="9" width="2" height="4" fill="#fff"/><rect x="7" y="6" width="2" height="7" fill="#fff"/><rect x="11" y="3" width="2" height="10" fill="#fff"/></svg>)svg";

}  // namespace modelatlas::web
