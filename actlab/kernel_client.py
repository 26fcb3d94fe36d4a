"""The kernel client every notebook execution uses: ready as soon as the kernel has answered.

Why: jupyter_client's `wait_for_ready` drains IOPub after the `kernel_info` reply until no message has come for
0.2 s, which ends only by timing out: idle time on every run. Here the drain ends at the kernel's `status: idle`
for our `kernel_info` request (published after the reply: everything for the request has then arrived); the
0.2 s timeout stays as the bound. Otherwise the handshake is jupyter_client's, through public interfaces only
(`wait_for_ready`, hooked by `KernelManager.client_class`); a client no kernel manager made keeps the original.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

import jupyter_client
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import KernelManager
from jupyter_client.utils import ensure_async

DRAIN_TIMEOUT = 0.2  # seconds without an IOPub message after which the drain ends anyway (jupyter_client's)


class PromptKernelClient(AsyncKernelClient):
    """`AsyncKernelClient` whose `wait_for_ready` ends when the kernel is idle after its `kernel_info` reply."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        if not isinstance(self.parent, KernelManager):
            await super().wait_for_ready(timeout=timeout)
            return
        deadline = time.time() + (float("inf") if timeout is None else timeout)
        while True:
            request = self.kernel_info()
            reply = await _message(self.shell_channel, timeout=1)
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                first = await _message(self.iopub_channel, timeout=DRAIN_TIMEOUT)
                if first is not None:  # IOPub is connected
                    self._adapt_to(reply)
                    break
            if not await ensure_async(self.is_alive()):
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.time() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")
        message = first
        while message is not None and not _idle_after(message, request):
            message = await _message(self.iopub_channel, timeout=DRAIN_TIMEOUT)

    def _adapt_to(self, reply: dict[str, Any]) -> None:
        """Speak the kernel's major protocol version, as jupyter_client does on a `kernel_info` reply."""
        major = int(reply["content"]["protocol_version"].split(".")[0])
        if major != jupyter_client.protocol_version_info[0]:
            self.session.adapt_version = major


async def _message(channel: Any, timeout: float) -> dict[str, Any] | None:
    """The channel's next message, or None if none comes within `timeout` seconds."""
    try:
        return await ensure_async(channel.get_msg(timeout=timeout))
    except Empty:
        return None


def _idle_after(message: dict[str, Any], request: str) -> bool:
    """True for the kernel's `status: idle` that closes the request with id `request`."""
    return (
        message.get("msg_type") == "status"
        and message.get("content", {}).get("execution_state") == "idle"
        and message.get("parent_header", {}).get("msg_id") == request
    )
