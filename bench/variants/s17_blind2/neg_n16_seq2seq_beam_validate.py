"""Transformer NMT trainer: teacher-forced training and beam-search validation with BLEU."""
import sacrebleu
import torch
import torch.nn.functional as F


class NMTTrainer:
    def __init__(self, model, tokenizer, train_loader, val_loader, beam=4, max_len=128,
                 len_penalty=0.6, device="cuda"):
        self.model = model.to(device)
        self.tok = tokenizer
        self.train_loader, self.val_loader = train_loader, val_loader
        self.beam, self.max_len, self.alpha = beam, max_len, len_penalty
        self.device = device
        self.opt = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-9)

    def beam_search(self, src):
        B, K = src.size(0), self.beam
        memory = self.model.encode(src).repeat_interleave(K, dim=0)
        src_mask = (src != self.tok.pad_token_id).repeat_interleave(K, dim=0)
        tokens = torch.full((B * K, 1), self.tok.bos_token_id, device=src.device)
        scores = torch.zeros(B, K, device=src.device)
        scores[:, 1:] = float("-inf")
        finished = torch.zeros(B * K, dtype=torch.bool, device=src.device)
        for _ in range(self.max_len):
            logp = F.log_softmax(self.model.decode(tokens, memory, src_mask)[:, -1], dim=-1)
            logp[finished] = float("-inf")
            logp[finished, self.tok.pad_token_id] = 0.0
            V = logp.size(-1)
            cand = (scores.view(-1, 1) + logp).view(B, K * V)
            scores, idx = cand.topk(K, dim=-1)
            beam_idx = (idx // V) + torch.arange(B, device=src.device).unsqueeze(1) * K
            next_tok = (idx % V).view(-1, 1)
            tokens = torch.cat([tokens[beam_idx.view(-1)], next_tok], dim=1)
            finished = finished[beam_idx.view(-1)] | (next_tok.squeeze(1) == self.tok.eos_token_id)
            if finished.all():
                break
        lengths = (tokens != self.tok.pad_token_id).sum(-1).view(B, K).float()
        normed = scores / (((5 + lengths) / 6) ** self.alpha)
        best_score, best = normed.max(dim=-1)
        best_tokens = tokens.view(B, K, -1)[torch.arange(B), best]
        return best_tokens, best_score

    @torch.inference_mode()
    def validate(self):
        self.model.eval()
        hyps, refs, seq_scores = [], [], []
        for batch in self.val_loader:
            src = batch["src"].to(self.device)
            tokens, score = self.beam_search(src)
            hyps.extend(self.tok.batch_decode(tokens.tolist(), skip_special_tokens=True))
            refs.extend(batch["ref_text"])
            seq_scores.append(score)
        bleu = sacrebleu.corpus_bleu(hyps, [refs]).score
        return {"bleu": bleu, "avg_logprob": torch.cat(seq_scores).mean().item()}

    def train_epoch(self, label_smoothing=0.1):
        self.model.train()
        for i, batch in enumerate(self.train_loader):
            src, tgt = batch["src"].to(self.device), batch["tgt"].to(self.device)
            logits = self.model(src, tgt[:, :-1])
            loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=self.tok.pad_token_id,
                                   label_smoothing=label_smoothing)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            if i % 200 == 0:
                print(f"it {i} loss {loss.item():.3f}")

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
            print(epoch, self.validate())
