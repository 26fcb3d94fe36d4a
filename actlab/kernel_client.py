"""The kernel client every notebook execution uses: ready as soon as the kernel has answered, not 0.2 s later.

Why: jupyter_client's `wait_for_ready` sends `kernel_info`, waits for the reply and for one IOPub message (so the
IOPub subscription is known to be live), then drains IOPub until no message has come for 0.2 s. That last wait
ends only by timing out: every client paid 0.2 s of idle time, on every sweep run's clock (papermill connects one
client per run).

Here the drain ends at the message that closes the exchange: the kernel's `status: idle` for our `kernel_info`
request, which ipykernel publishes after the reply. Everything the kernel publishes for that request has then
arrived, which is all the drain was for; the 0.2 s timeout stays as the bound when that message never comes.

Only public interfaces: this overrides `wait_for_ready` itself (the documented method nbclient and papermill call;
`KernelManager.client_class` is its documented hook) and uses the client's public channels, `kernel_info`,
`is_alive` and session. The handshake is jupyter_client's (the reply, the IOPub check, a dead kernel, the overall
timeout, the protocol adaptation for an older kernel); a client that no kernel manager made (no process to ask
whether the kernel lives) keeps jupyter_client's own wait.
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
