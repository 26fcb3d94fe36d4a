"""Executing papermill notebooks and rendering them to HTML.

Why one module: every page and sweep run executes a template the same way: with the project's own named kernel
(never some other Python), into an output folder (the template is never overwritten), rendered with code hidden.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from actlab.errors import ActlabError

KERNEL_NAME = "actlab"
# Held while this process makes a kernel socket folder, and for good once it is ending (`remove_own_sockets`).
_SOCKET_FOLDERS = threading.Lock()


def _ipc_kernel_manager(folder: str, cwd: str | None = None, kernel_specs: str | None = None) -> type:
    """jupyter_client's async kernel manager, talking to the kernel over Unix sockets in `folder`, not local TCP.

    Why: a local kernel needs no network port, and ipykernel warns on every start over TCP without a CurveZMQ key.
    The ipc sockets are files in `folder` (private, 0700, short: a socket path has ~107 bytes), nobody else's.

    `cwd`: given to the kernel's launch, not set with `os.chdir` as papermill does: the working directory is the
    whole process's, and `actlab report` renders pages on a thread while the main thread runs sweeps.
    `kernel_specs`: a folder of kernel specs to use instead of Jupyter's (`actlab.sweep.kept_kernel`).
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class IpcKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            if kernel_specs is not None:
                kwargs.setdefault("kernel_spec_manager", KernelSpecManager(kernel_dirs=[kernel_specs]))
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = os.path.join(folder, "socket")  # absolute: the kernel runs in another cwd
            self.client_class = "actlab.kernel_client.PromptKernelClient"  # ready without an idle 0.2 s wait

        async def start_kernel(self, **kw: Any) -> None:
            if cwd is not None:
                kw.setdefault("cwd", cwd)
            await super().start_kernel(**kw)

    return IpcKernelManager


def sockets_prefix(pid: int) -> str:
    """The prefix of process `pid`'s kernel socket folders: a killed worker never removes its own, so whoever
    killed it removes those of the pids it killed (`remove_sockets_of`)."""
    return f"actlab-kernel-{pid}-"


def make_sockets_folder() -> str:
    """A new private (0700) kernel socket folder of this process, named by `sockets_prefix`; the caller removes it."""
    with _SOCKET_FOLDERS:
        return tempfile.mkdtemp(prefix=sockets_prefix(os.getpid()))


def remove_own_sockets() -> None:
    """Remove this process's socket folders, and let none of its threads make another: for a process about to
    `os._exit` while another of its threads may be starting a run's kernel (a worker whose sweep died,
    `actlab.sweep.lifeline`). Without the lock, a folder made between the removal and the exit stayed behind."""
    _SOCKET_FOLDERS.acquire()  # never released: the process exits holding it
    remove_sockets_of([os.getpid()])


def remove_sockets_of(pids: Iterable[int]) -> None:
    """Remove the kernel socket folders that the (ended) processes `pids` created."""
    for pid in pids:
        for folder in Path(tempfile.gettempdir()).glob(sockets_prefix(pid) + "*"):
            shutil.rmtree(folder, ignore_errors=True)


def ensure_kernel(name: str = KERNEL_NAME) -> str:
    """Install a kernel spec `name` that runs *this* interpreter, if missing, into `sys.prefix` (the venv)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    try:
        spec = manager.get_kernel_spec(name)
        if Path(spec.argv[0]).resolve() == Path(sys.executable).resolve():
            return name
    except NoSuchKernel:
        pass
    from ipykernel.kernelspec import install

    install(kernel_name=name, display_name=f"Python (actlab, {sys.prefix})", prefix=sys.prefix)
    return name


def execute(
    template: str | os.PathLike[str],
    output: str | os.PathLike[str],
    parameters: dict[str, Any] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    stop_kernel_at_once: bool = False,
    kernel_specs: str | None = None,
) -> Path:
    """Run `template` with papermill into `output`; a `PapermillExecutionError` is left to the caller, which decides
    whether it ends a sweep (never) or a report build (yes).

    `stop_kernel_at_once`: kill the kernel after the last cell rather than wait for its interpreter to tear torch
    down; for sweep runs, whose results are written atomically by then. `kernel_specs`: see `_ipc_kernel_manager`.
    """
    import papermill as pm

    template, output = Path(template), Path(output)
    if not template.is_file():
        raise ActlabError(f"notebook {template} not found; give a path to an .ipynb template")
    if template.resolve() == output.resolve():
        raise ActlabError(f"refusing to overwrite the template {template} with its executed copy")
    output.parent.mkdir(parents=True, exist_ok=True)
    kernel_cwd = Path(cwd if cwd is not None else output.parent).resolve()
    sockets = make_sockets_folder()
    try:
        pm.execute_notebook(
            str(template),
            str(output),
            parameters=parameters or {},
            kernel_name=ensure_kernel(),
            cwd=None,  # the kernel starts in `cwd` (below); this process's working directory is left alone
            progress_bar=False,
            execution_timeout=timeout,
            kernel_manager_class=_ipc_kernel_manager(sockets, str(kernel_cwd), kernel_specs),
            shutdown_kernel="immediate" if stop_kernel_at_once else "graceful",
        )
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    return output


LEAD_TAG = "lead"  # cells shown first on the page, right after the title cell


def lead_first(cells: list[Any]) -> list[Any]:
    """`cells` with those tagged `lead` moved to just after the first markdown cell (the page's title): a notebook
    computes the claims last, but a reader should see them first."""
    lead = [cell for cell in cells if LEAD_TAG in cell.get("metadata", {}).get("tags", [])]
    rest = [cell for cell in cells if LEAD_TAG not in cell.get("metadata", {}).get("tags", [])]
    title = next((i for i, cell in enumerate(rest) if cell.get("cell_type") == "markdown"), -1)
    return rest[: title + 1] + lead + rest[title + 1 :]


TEMPLATES = Path(__file__).parent / "templates" / "nbconvert"
PAGE_TEMPLATE = "actlab_page"  # nbconvert's lab cell markup with a head that loads nothing (see its index.html.j2)


def to_html(
    notebook: str | os.PathLike[str],
    html: str | os.PathLike[str],
    show_code: bool = False,
    title: str = "",
    css: str = "",
) -> Path:
    """Render an executed notebook to standalone HTML: images embedded, code hidden by default, `lead` cells first.

    Offline: the page loads nothing from the network (no require.js, MathJax or JupyterLab stylesheet); its CSS
    is `css` (the site's stylesheet, `actlab.site.chrome.stylesheet`, which styles the cells too), LaTeX is MathML.
    Sanitised by `actlab.sanitize` (`clean_html`, `image_html`), so no string in a notebook's output can run script
    on the page. `title` is the `<title>` (default: the file name).
    """
    import nbformat
    from nbconvert import HTMLExporter

    from actlab.io import atomic_write_text
    from actlab.sanitize import clean_html, image_html, latex_mathml

    exporter = HTMLExporter(
        template_name=PAGE_TEMPLATE,
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=not show_code,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        sanitize_html=True,
    )
    exporter.register_filter("clean_html", clean_html)
    exporter.register_filter("latex_mathml", latex_mathml)
    exporter.register_filter("image_html", image_html)
    node = nbformat.read(str(notebook), as_version=4)
    node.cells = lead_first(node.cells)
    if title:
        node.metadata["title"] = title
    body, _ = exporter.from_notebook_node(node, resources={"page_css": css})
    return atomic_write_text(html, body)
