#ifndef BRIGADE_REPOSITORY_CONTROL_MODE_H_
#define BRIGADE_REPOSITORY_CONTROL_MODE_H_

// How the model repository's set of models may change (Triton's --model-control-mode):
//   kNone      every model is loaded at start-up; the set never changes afterwards.
//   kPoll      as kNone, then the directory is rescanned every poll interval: new models and
//              versions load, removed ones unload, changed files or configs reload.
//   kExplicit  only the start-up list loads; the repository extension's load/unload change it.
// Its own header so the server's options can name it without the repository's.

namespace brigade::repository {

enum class ControlMode { kNone, kPoll, kExplicit };

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_CONTROL_MODE_H_
